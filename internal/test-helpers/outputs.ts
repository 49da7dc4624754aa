/**
 * Readers of the output items that answer tool calls. Typed by shape, so they take a `ResponseItem`,
 * a `ToolOutputItem` or `undefined` alike.
 */
import { texts } from './items';

/** An output item's text: its string body, or each content item's text (an image's url) a line each; '' for none. */
export const outputText = (item: unknown): string => texts(item).join('\n');

/** The output items (`function_call_output`, `custom_tool_call_output`, …) answering `callId` among `items`. */
export const outputsOf = <T extends { type: string }>(items: readonly T[], callId: string): T[] =>
  items.filter((item) => (item as { call_id?: string }).call_id === callId && item.type.endsWith('_output'));

/** The text of the first output answering `callId` among `items` ('' when there is none). */
export const outputOf = (items: ReadonlyArray<{ type: string }>, callId: string): string => outputText(outputsOf(items, callId)[0]);

/** The cell id in an `exec` answer of a cell still running; throws when the item is no such answer. */
export function cellIdOf(item: unknown): string {
  const match = /Script running with cell ID (\S+)/.exec(outputText(item));
  if (!match) throw new Error(`no running cell's id in ${JSON.stringify(item)}`);
  return match[1];
}

/** An output item's text to compare whole: wall time masked (`Wall time …`), a part without text shown as `[<type>]`. */
export function outputTranscript(item: unknown): string {
  const output = (item as { output?: string | Array<{ type: string; text?: string }> } | undefined)?.output ?? '';
  const text = typeof output === 'string' ? output : output.map((part) => part.text ?? `[${part.type}]`).join('\n');
  return text.replace(/^Wall time [\d.]+ seconds$/m, 'Wall time …');
}
