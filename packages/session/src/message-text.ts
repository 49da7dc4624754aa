import type { MessageItem, ResponseItem } from '@switchyard/protocol';

/**
 * The text of an assistant message item; `undefined` for any other item. A `refusal` part (the
 * model declined, as the Responses API and Chat Completions report it) counts as text.
 */
export function assistantText(item: ResponseItem): string | undefined {
  if (item.type !== 'message' || (item as MessageItem).role !== 'assistant') return undefined;
  const content = (item as MessageItem).content;
  return typeof content === 'string' ? content : content.map((part) => partText(part as Record<string, unknown>)).join('');
}

function partText(part: Record<string, unknown>): string {
  if (typeof part.text === 'string') return part.text;
  return part.type === 'refusal' && typeof part.refusal === 'string' ? part.refusal : '';
}
