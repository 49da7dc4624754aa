import { checkOptions, optionRules as rule, redactCredentials, type OptionsShape } from '@switchyard/kit/internal';
import { errorMessage } from '@switchyard/protocol';
import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import type { UIApprovals } from './ui-approvals';
import { UIChunkTranslator, type TurnEventLike } from './ui-translate';

/** Options of {@link toUIMessageStream}. */
export interface UIMessageStreamOptions {
  /** The assistant message's id, sent in the `start` chunk (default: none; the client makes one). */
  messageId?: string;
  /**
   * The approvals bridge the session asks (`createSession({ approvals })`): its requests for calls of
   * this turn become `tool-approval-request` chunks, its settlements `tool-approval-response`.
   */
  approvals?: UIApprovals;
  /**
   * The text of an error chunk, from the turn's error. Default: the error's `code` and message with
   * anything that looks like a credential (bearer tokens, API keys, passwords in URLs) replaced by
   * `[redacted]`, at most 2 000 characters; never a cause or a stack.
   */
  onError?: (error: unknown) => string;
  /** Longest nested-call input (characters) sent whole in its data part; longer ones send `inputPreview`. Default 20 000. */
  maxInputChars?: number;
}

/** The `init` of {@link toUIMessageStreamResponse}: the response's fields and the stream's options. */
export interface UIMessageStreamResponseInit extends UIMessageStreamOptions {
  status?: number;
  statusText?: string;
  headers?: ConstructorParameters<typeof Headers>[0];
  /** Sends an SSE comment this often (ms) while nothing else is sent, so proxies keep the connection. Default: none. */
  keepAliveMs?: number;
}

const STREAM_OPTION_RULES: OptionsShape<UIMessageStreamOptions> = {
  messageId: rule.string(),
  approvals: rule.object(),
  onError: rule.function(),
  maxInputChars: rule.number({ min: 0, integer: true }),
};

const DEFAULT_MAX_INPUT_CHARS = 20_000;
const MAX_ERROR_CHARS = 2_000;

/** The translator of one stream, with the options checked and defaulted. */
export function createTranslator(options: Pick<UIMessageStreamOptions, 'onError' | 'maxInputChars'>, cells?: Map<string, string | undefined>): UIChunkTranslator {
  return new UIChunkTranslator({ errorText: options.onError ?? safeErrorText, maxInputChars: options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS, cells });
}

/**
 * A Switchyard turn's events (`session.streamTurn(...)`, or any turn's events in order) as the AI
 * SDK's UI message stream: what `useChat` / `Chat` / `readUIMessageStream` read. Text and
 * reasoning become their parts; each call the model made a tool part (`exec`'s input is the cell's
 * source, its output the cell's result); nested calls, cells, hook runs, background results and
 * items without a part of their own become `data-switchyard-*` parts; each sampling step is a
 * step; a failed turn ends with an error chunk. A reader that cancels (a client gone) does not stop
 * the turn: the events are still drained, so the turn finishes and its result is in the history
 * (stop a turn with its own `signal`).
 */
export function toUIMessageStream(events: AsyncIterable<TurnEventLike>, options: UIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  checkOptions('toUIMessageStream', options, STREAM_OPTION_RULES, { optional: true });
  const translator = createTranslator(options);
  let cancelled = false;
  let unsubscribe: (() => void) | undefined;
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      const send = (chunks: readonly UIMessageChunk[]) => {
        if (cancelled) return;
        for (const chunk of chunks) controller.enqueue(chunk);
      };
      send([{ type: 'start', ...(options.messageId !== undefined ? { messageId: options.messageId } : {}) }]);
      unsubscribe = options.approvals?.subscribe((notice) => send(translator.approval(notice)));
      void pump(events, translator, send).then((finish) => {
        unsubscribe?.();
        if (cancelled) return;
        send(finish);
        controller.close();
      });
    },
    cancel() {
      cancelled = true;
      unsubscribe?.();
    },
  });
}

/** Reads every event (also after the reader left) and returns the closing chunks. */
async function pump(events: AsyncIterable<TurnEventLike>, translator: UIChunkTranslator, send: (chunks: readonly UIMessageChunk[]) => void): Promise<UIMessageChunk[]> {
  try {
    for await (const event of events) send(translator.translate(event));
  } catch (error) {
    // streamTurn throws the error its turn-end already carried; anything else is reported here
    if (!translator.outcome) send([{ type: 'error', errorText: safeErrorText(error) }]);
  }
  const outcome = translator.outcome;
  const closing: UIMessageChunk[] = translator.closeParts();
  if (outcome?.aborted) closing.push({ type: 'abort', reason: 'the turn was aborted' });
  closing.push({ type: 'finish', finishReason: outcome?.finishReason ?? 'error' });
  return closing;
}

/**
 * {@link toUIMessageStream} as an HTTP response: server-sent events with the UI message stream
 * protocol's headers (`UI_MESSAGE_STREAM_HEADERS`, `x-vercel-ai-ui-message-stream: v1`), ending
 * with `data: [DONE]`. `init` takes the response's `status`, `statusText`, `headers` and the
 * stream's options.
 */
export function toUIMessageStreamResponse(events: AsyncIterable<TurnEventLike>, init: UIMessageStreamResponseInit = {}): Response {
  const { status, statusText, headers, keepAliveMs, ...streamOptions } = init;
  return createUIMessageStreamResponse({ stream: toUIMessageStream(events, streamOptions), status, statusText, headers, keepAliveMs });
}

/**
 * An error as a page may see it: `CODE: message`, with credential-looking text redacted and the
 * length bounded. Never the cause, the stack, or the request that failed.
 */
export function safeErrorText(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = errorMessage(error);
  const text = redactCredentials(typeof code === 'string' && !message.startsWith(code) ? `${code}: ${message}` : message);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}

