import type { JSONSchema7, LanguageModelV4FunctionTool, LanguageModelV4ProviderTool } from '@ai-sdk/provider';
import type { JsonObject, WireTool } from '@switchyard/protocol';
import { flattenWireTools } from '@switchyard/kit/internal';

/**
 * How the step's custom (freeform) tools reach an AI SDK model:
 * - `function`: a function tool with one string argument — `code` for `exec`, `input` for any
 *   other freeform tool (`apply_patch`) — for the providers that have no freeform tools;
 * - `openai`: OpenAI's own freeform tools (`openai.custom` provider tools of `@ai-sdk/openai`'s
 *   Responses models), so a grammar constrains the model as it does on the Responses API.
 */
export type CustomToolMode = 'function' | 'openai';

/** What an AI SDK tool name stands for in the Switchyard plan. */
export type ToolTarget =
  | { readonly kind: 'function'; readonly name: string; readonly namespace?: string }
  | {
      readonly kind: 'custom';
      readonly name: string;
      readonly namespace?: string;
      /** The function-form argument holding the raw text; absent when sent as a native freeform tool. */
      readonly argument?: string;
    };

/** The one string argument of a freeform tool in function form: `exec` takes `{ code }`, others `{ input }`. */
export function customToolArgument(name: string): string {
  return name === 'exec' ? 'code' : 'input';
}

/**
 * Maps a request's Responses-API tools to AI SDK tools. Namespace members are flattened with the
 * Code Mode name rules (`clock` + `curr_time` → `clock__curr_time`), which also makes every name a
 * valid identifier for providers that restrict tool names; the first tool of a flat name wins.
 * `tool_search` and hosted specs have no provider-neutral form and are left out (plan with
 * `provider: { toolSearch: false }`).
 */
export function toAiSdkTools(
  tools: readonly WireTool[],
  customTools: CustomToolMode,
): { tools: Array<LanguageModelV4FunctionTool | LanguageModelV4ProviderTool>; targets: Map<string, ToolTarget> } {
  const out: Array<LanguageModelV4FunctionTool | LanguageModelV4ProviderTool> = [];
  const targets = new Map<string, ToolTarget>();
  for (const { flatName, kind, name, namespace, spec } of flattenWireTools(tools)) {
    if (kind === 'function') {
      targets.set(flatName, namespace ? { kind, name, namespace } : { kind, name });
      out.push(functionTool(spec, flatName));
    } else if (customTools === 'openai') {
      targets.set(flatName, namespace ? { kind, name, namespace } : { kind, name });
      out.push(openaiCustomTool(spec, flatName));
    } else {
      const argument = customToolArgument(name);
      targets.set(flatName, namespace ? { kind, name, namespace, argument } : { kind, name, argument });
      out.push(customFunctionTool(spec, flatName, argument));
    }
  }
  return { tools: out, targets };
}

function functionTool(spec: JsonObject, flatName: string): LanguageModelV4FunctionTool {
  const tool: LanguageModelV4FunctionTool = {
    type: 'function',
    name: flatName,
    description: typeof spec.description === 'string' ? spec.description : '',
    inputSchema: ((spec.parameters as JSONSchema7 | undefined) ?? { type: 'object', properties: {} }) as JSONSchema7,
  };
  if (spec.strict === true) tool.strict = true;
  return tool;
}

function grammarOf(spec: JsonObject): { syntax: string; definition: string } | undefined {
  const format = spec.format as { type?: string; syntax?: string; definition?: string } | undefined;
  return format?.type === 'grammar' && typeof format.definition === 'string' ? { syntax: String(format.syntax), definition: format.definition } : undefined;
}

function customFunctionTool(spec: JsonObject, flatName: string, argument: string): LanguageModelV4FunctionTool {
  const grammar = grammarOf(spec);
  const what = argument === 'code' ? 'The JavaScript source to run.' : 'The raw input.';
  const description = grammar ? `${what} It must match this ${grammar.syntax} grammar:\n${grammar.definition}` : what;
  return {
    type: 'function',
    name: flatName,
    description: typeof spec.description === 'string' ? spec.description : '',
    inputSchema: {
      type: 'object',
      properties: { [argument]: { type: 'string', description } },
      required: [argument],
      additionalProperties: false,
    },
  };
}

function openaiCustomTool(spec: JsonObject, flatName: string): LanguageModelV4ProviderTool {
  const grammar = grammarOf(spec);
  return {
    type: 'provider',
    id: 'openai.custom',
    name: flatName,
    args: {
      ...(typeof spec.description === 'string' ? { description: spec.description } : {}),
      format: grammar ? { type: 'grammar', syntax: grammar.syntax, definition: grammar.definition } : { type: 'text' },
    },
  };
}
