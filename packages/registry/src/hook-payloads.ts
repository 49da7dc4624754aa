import { RespondToModelError, codeModeName, displayName, toolNameSpellings, isJsonObject, type HookPayloadAdapter, type HookToolInput, type JsonValue, type ToolExecutor, type ToolInvocation, type ToolName, type ToolOutput, type ToolPayload } from '@switchyard/protocol';

/** Pre-hook input of a call, or `undefined` when the call gets no hooks. */
export function preHookInput(executor: ToolExecutor, invocation: ToolInvocation): HookToolInput | undefined {
  const adapter = executor.hookPayload;
  if (adapter === false) return undefined;
  if (adapter?.pre) return adapter.pre(invocation);
  return defaultHookInput(invocation);
}

/** Post-hook input and response of a finished call, or `undefined` for none. */
export function postHookInput(
  executor: ToolExecutor,
  invocation: ToolInvocation,
  output: ToolOutput,
): { input: HookToolInput; response: JsonValue } | undefined {
  const adapter = executor.hookPayload;
  if (adapter === false) return undefined;
  if (adapter?.post) return adapter.post(invocation, output);
  const input = defaultHookInput(invocation);
  if (!input) return undefined;
  const response = output.postToolUseResponse ? output.postToolUseResponse(invocation.payload) : output.codeModeResult(invocation.payload);
  return { input, response };
}

/**
 * The names matchers try besides the hook name: the adapter's aliases, then every name the tool
 * itself answers to, so a matcher may name the hook name (`Bash`), the tool's display name
 * (`inventory__check_stock`), its bare name (`check_stock`), `inventory.check_stock`, or its
 * Code Mode identifier. Deduplicated; never includes the hook name itself (stdin never shows aliases).
 */
export function matcherAliases(input: HookToolInput, tool: ToolName): string[] {
  const names = [...(input.aliases ?? []), ...toolNameSpellings(tool), codeModeName(tool)];
  return [...new Set(names)].filter((name) => name !== input.toolName);
}

/**
 * Applies a hook's `updatedInput`. Function payloads are re-serialized as the arguments string;
 * other payloads need the executor's own `rewrite` (throws a `RespondToModelError` otherwise).
 */
export function rewritePayload(executor: ToolExecutor, invocation: ToolInvocation, updatedInput: JsonValue): ToolPayload {
  const adapter: HookPayloadAdapter | undefined = executor.hookPayload || undefined;
  if (adapter?.rewrite) return adapter.rewrite(invocation, updatedInput);
  if (invocation.payload.kind === 'function') return { kind: 'function', arguments: JSON.stringify(updatedInput) };
  throw new RespondToModelError(`hook returned updatedInput but tool ${displayName(invocation.toolName)} does not accept rewritten input`);
}

/**
 * The model-visible text of a blocked call: shell and apply_patch calls with a
 * string command quote the command, every other call names the tool.
 */
export function blockedMessage(input: HookToolInput, reason: string): string {
  const command = isJsonObject(input.toolInput) ? input.toolInput.command : undefined;
  if ((input.toolName === 'Bash' || input.toolName === 'apply_patch') && typeof command === 'string') {
    return `Command blocked by PreToolUse hook: ${reason}. Command: ${command}`;
  }
  return `Tool call blocked by PreToolUse hook: ${reason}. Tool: ${input.toolName}`;
}

/** Function payloads: `{tool_name: display name, tool_input: parsed arguments}`; others: none. */
function defaultHookInput(invocation: ToolInvocation): HookToolInput | undefined {
  const payload = invocation.payload;
  if (payload.kind !== 'function') return undefined;
  return { toolName: displayName(invocation.toolName), toolInput: hookToolInput(payload.arguments) };
}

/** Blank arguments → `{}`, JSON → the value, anything else → the raw string. */
function hookToolInput(raw: string): JsonValue {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    return raw;
  }
}
