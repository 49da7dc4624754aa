import type { MessageItem, ResponseItem } from '@switchyard/protocol';

/** The text of an assistant message item; `undefined` for any other item. */
export function assistantText(item: ResponseItem): string | undefined {
  if (item.type !== 'message' || (item as MessageItem).role !== 'assistant') return undefined;
  const content = (item as MessageItem).content;
  return typeof content === 'string' ? content : content.map((part) => ('text' in part ? part.text : '')).join('');
}
