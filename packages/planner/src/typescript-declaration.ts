import { augmentCodeModeDescription, schemaToTypeScript, type CodeModeDeclarationInput, type JsonSchema } from '@switchyard/protocol';

/** Options of {@link codeModeUsageSample}: the protocol's declaration input, with schemas as plain values. */
export type CodeModeUsageSampleOptions = Omit<CodeModeDeclarationInput, 'inputSchema' | 'outputSchema'> & { inputSchema?: unknown; outputSchema?: unknown };

/**
 * Renders a JSON Schema as a TypeScript type. The one implementation lives in
 * `@switchyard/protocol` (`schemaToTypeScript`) so the planner and the broker render the same text.
 */
export function renderJsonSchemaToTypeScript(schema: unknown): string {
  return schemaToTypeScript(schema as JsonSchema | boolean | undefined);
}

/** The description augmented for Code Mode (`augment_tool_spec_for_code_mode`); see `augmentCodeModeDescription`. */
export function codeModeUsageSample(options: CodeModeUsageSampleOptions): string {
  return augmentCodeModeDescription(options as CodeModeDeclarationInput);
}
