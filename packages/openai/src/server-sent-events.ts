import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ModelRequestError, errorMessage } from '@switchyard/protocol';
import type { StreamGuard } from './stream-limits';

/**
 * Reads a fetch body as server-sent events. A failed read (the connection dropped) becomes a
 * retryable {@link ModelRequestError}; leaving the loop early cancels the body so the
 * connection is released. With a `guard`, each event restarts its idle timer (comments, the
 * keep-alives, do not) and the bytes of one event are bounded.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>, guard?: StreamGuard): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  // Bytes fed since the last event or comment: what the parser may be holding.
  let held = 0;
  const parser = createParser({
    onEvent: (event) => {
      held = 0;
      guard?.eventArrived();
      pending.push(event);
    },
    onComment: () => void (held = 0),
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        finished = true;
        if (error instanceof ModelRequestError) throw error; // a bound of the guard
        throw new ModelRequestError(`model stream interrupted: ${errorMessage(error)}`, { retryable: true, cause: error });
      }
      if (chunk.done) {
        finished = true;
        parser.feed(decoder.decode());
        parser.reset({ consume: true });
        while (pending.length > 0) yield pending.shift()!;
        return;
      }
      held += chunk.value.byteLength;
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      if (held > 0) guard?.checkPendingEvent(held);
      while (pending.length > 0) yield pending.shift()!;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Parses one event's JSON data; malformed JSON is a non-retryable {@link ModelRequestError}. */
export function parseEventData(data: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch (error) {
    throw new ModelRequestError(`model stream sent malformed JSON: ${truncate(data)}`, { retryable: false, cause: error });
  }
  throw new ModelRequestError(`model stream sent a non-object event: ${truncate(data)}`, { retryable: false });
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
