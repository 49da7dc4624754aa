/**
 * Builders and readers of the items tests script and check. Typed by shape, not by the protocol's
 * types, so this package stays below every Switchyard package; what they return fits a
 * `ResponseItem` where one is expected.
 */

/** The model's answer that ends a turn: an assistant message item. */
export const say = (text: string) => ({ type: 'message' as const, role: 'assistant' as const, content: text });

/** The texts of a tool's output item: its string body, or each content item's text (an image's url). */
export function texts(item: unknown): string[] {
  const output = (item as { output?: unknown } | undefined)?.output;
  if (typeof output === 'string') return [output];
  if (Array.isArray(output)) return output.map((part: { text?: string; image_url?: string }) => part.text ?? part.image_url ?? '');
  return [];
}

/** What a Code Mode cell gave back, in order: each text, an image as its url. */
export const cellTexts = (observation: { items: ReadonlyArray<{ type: string; text?: string; image_url?: string }> }) =>
  observation.items.map((item) => (item.type === 'input_text' ? item.text : item.image_url));

/** The texts of an MCP tool result's content blocks; a block without text shows as `[<type>]`. */
export const contentTexts = (result: object) =>
  (result as { content: ReadonlyArray<{ type: string; text?: string }> }).content.map((block) => block.text ?? `[${block.type}]`);

/** An observation with its wall time zeroed, to compare two answers to one cell. */
export const withoutTime = <T extends { wallTimeMs: number }>(observation: T): T => ({ ...observation, wallTimeMs: 0 });
