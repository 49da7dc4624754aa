import { notJsonResultText } from '@switchyard/kit/internal';
import { errorMessage, type CellHost, type CellToolRequest, type CellToolResult, type JournalCallResult } from '@switchyard/protocol';

/**
 * A nested call's outcome as a journal records it and as a cell receives it: the result's JSON
 * text (the host's one encode of a value, or the text it held), or the text the cell's promise
 * rejects with. Shared by the cell (its host's answer), the in-process journal keeper and the
 * agent host's call proxy.
 */

/** The text of a failed call: a string as it is, anything else its message. */
export function failureText(error: unknown): string {
  return typeof error === 'string' ? error : errorMessage(error);
}

/** A host's value as JSON text, or the failure saying it is not JSON. */
export function encodeValue(value: unknown): JournalCallResult {
  try {
    return { ok: true, json: JSON.stringify(value) };
  } catch (error) {
    return { ok: false, error: notJsonResultText(error) };
  }
}

/** Runs the call on `host` and settles to its outcome (never rejects). */
export function runOnHost(host: CellHost, request: CellToolRequest): Promise<JournalCallResult> {
  let answer: Promise<CellToolResult>;
  try {
    answer = host.invokeToolJson ? Promise.resolve(host.invokeToolJson(request)) : Promise.resolve(host.invokeTool(request)).then((value) => ({ value }));
  } catch (error) {
    answer = Promise.reject(error);
  }
  return answer.then(
    (result): JournalCallResult => ('json' in result ? { ok: true, json: result.json } : encodeValue(result.value)),
    (error: unknown): JournalCallResult => ({ ok: false, error: failureText(error) }),
  );
}

/** The outcome as a `CellHost.invokeToolJson` answer: resolves with the text, or rejects with the failure text. */
export function asHostAnswer(result: JournalCallResult): Promise<CellToolResult> {
  return result.ok ? Promise.resolve({ json: result.json }) : Promise.reject(result.error);
}

/** What a call in flight when its agent host restarted rejects with (unless its tool is idempotent). */
export function interruptedByRestart(tool: string): string {
  return `tool \`${tool}\` was interrupted by a restart of its host: it may or may not have taken effect, and it was not run again`;
}
