import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The recorded stream of a fixture (one JSON event per line; see fixtures/SOURCES.md). */
export function recordedEvents(name: string): Array<Record<string, unknown>> {
  return readFileSync(join(here, 'fixtures', name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The events as SSE, `event:` named after each event's `type`, as both providers' APIs send them. */
export function asSse(events: Array<Record<string, unknown>>): Array<{ event: string; data: string }> {
  return events.map((event) => ({ event: String(event.type), data: JSON.stringify(event) }));
}

/**
 * The recorded Anthropic tool-use stream with its one tool call re-aimed at `name` and `input`:
 * every other event (message_start usage, the text block, pings, block indexes, message_delta
 * stop_reason and usage, message_stop) stays as recorded. The input JSON is cut into as many
 * `input_json_delta` fragments as the recording had, at the same relative positions.
 */
export function anthropicToolCall(name: string, input: unknown): Array<Record<string, unknown>> {
  const events = recordedEvents('anthropic-json-tool.2.chunks.txt');
  const json = JSON.stringify(input);
  const deltas = events.filter((e) => e.type === 'content_block_delta' && (e.delta as { type?: string }).type === 'input_json_delta');
  const recorded = deltas.map((e) => (e.delta as { partial_json: string }).partial_json);
  const total = recorded.join('').length;
  let offset = 0;
  let consumed = 0;
  deltas.forEach((event, index) => {
    consumed += recorded[index]!.length;
    const end = index === deltas.length - 1 ? json.length : Math.round((consumed / total) * json.length);
    (event.delta as { partial_json: string }).partial_json = json.slice(offset, end);
    offset = end;
  });
  for (const event of events) {
    const block = event.content_block as { type?: string; name?: string } | undefined;
    if (event.type === 'content_block_start' && block?.type === 'tool_use') block.name = name;
  }
  return events;
}
