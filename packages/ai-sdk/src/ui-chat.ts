import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import { SwitchyardError, type ModelClient, type ResponseItem } from '@switchyard/protocol';
import { createUIMessageStreamResponse, type UIMessage } from 'ai';
import type { UIApprovals } from './ui-approvals';
import { approvalAnswers, readChatRequest, textResponse } from './ui-chat-request';
import type { SwitchyardUIMessage } from './ui-data';
import { historyToUIMessages, uiMessagesToHistory } from './ui-messages';
import { createTranslator } from './ui-stream';
import type { ApprovalNotice, TurnEventLike } from './ui-translate';
import { TurnLog } from './ui-turn-log';

/**
 * The part of a Switchyard session a chat drives (a `createSession(...)` value has it): its history,
 * its events, and a turn at a time. Structural, so this package does not depend on the session.
 */
export interface ChatSessionLike {
  readonly history: readonly ResponseItem[];
  on(type: 'turn-start', listener: (event: { type: 'turn-start'; turnId: string }) => void): () => void;
  runTurn(options: { model: ModelClient; input: string | readonly ResponseItem[] }): Promise<unknown>;
}

/** Options of {@link createUIChat}. */
export interface UIChatOptions {
  /** The session of this chat (one chat per session). */
  session: ChatSessionLike;
  /** The model a page's message is answered with. */
  model: ModelClient;
  /** The approvals bridge given to the session as `approvals`, so the page can answer them. */
  approvals?: UIApprovals;
  /** Largest request body, in bytes (a larger one is answered 413). Default 4 MiB. */
  maxBodyBytes?: number;
  /** Longest a follow request waits for a turn to begin (its `wait` parameter is capped at it), in ms. Default 30 000. */
  maxFollowWaitMs?: number;
  /** Turns kept for followers (older ones are only in the history). Default 50. */
  keepTurns?: number;
  /** The text of an error chunk (see `toUIMessageStream`). */
  onError?: (error: unknown) => string;
  /** Longest nested-call input sent whole (see `toUIMessageStream`). */
  maxInputChars?: number;
}

/** A chat between pages and one session, served over HTTP (any server whose handlers take a `Request` and return a `Response`). */
export interface UIChat {
  /**
   * `POST {api}` as `useChat` / `Chat` (`DefaultChatTransport`) send it. The last message decides:
   * a user message starts a turn (409 while one runs); an assistant message carrying the page's
   * approval answers resolves them and continues the turn. The response is the turn's UI message
   * stream; it ends at the turn's end, or where the turn waits for the page's answers. Bad input
   * is a plain-text HTTP error (400, 405, 413, 415) and changes nothing.
   */
  post(request: Request): Promise<Response>;
  /**
   * `GET {api}/{chatId}/stream?after=<messageId>&wait=<ms>` (the AI SDK's resume request, with a
   * cursor: the page's last assistant message): what that page has not seen, replayed from its
   * start — the turn `after` again once it went on past answers it waited for (an approval that
   * timed out), else the turn after it (a wake turn); for an unknown or missing `after`, the running
   * turn. With `wait`, waits up to that long (capped by `maxFollowWaitMs`) for one. 204 when there is none.
   */
  follow(request: Request): Promise<Response>;
  /** The conversation as UI messages (for `useChat({ messages })` on a page load), with the ids the streams used. */
  messages(): SwitchyardUIMessage[];
  /** Stops listening to the session and the approvals. */
  close(): void;
}

const CHAT_OPTION_RULES: OptionsShape<UIChatOptions> = {
  session: rule.required(rule.object()),
  model: rule.required(rule.object()),
  approvals: rule.object(),
  maxBodyBytes: rule.number({ min: 1, integer: true }),
  maxFollowWaitMs: rule.number({ min: 0, integer: true }),
  keepTurns: rule.number({ min: 1, integer: true }),
  onError: rule.function(),
  maxInputChars: rule.number({ min: 0, integer: true }),
};

/** Every event type a turn's stream shows (and `turn-start`, which opens a turn). */
const EVENT_TYPES = [
  'turn-start',
  'step-start',
  'model-retry',
  'text-delta',
  'model-item',
  'tool-call-start',
  'tool-call-end',
  'tool-call-blocked',
  'tool-call-aborted',
  'tool-output',
  'cell-start',
  'cell-end',
  'hook-end',
  'background-complete',
  'turn-end',
] as const;
const MAX_BETWEEN_EVENTS = 1_000;

/**
 * Serves one session to pages that speak the AI SDK's UI message stream (`useChat`, `Chat`): every
 * turn — a page's, or one the session runs itself to read background results (`session.wake`) —
 * is kept as a stream that pages read, follow, and continue after answering approvals. A turn runs
 * on its own: a page that disconnects stops reading, never the turn.
 */
export function createUIChat(options: UIChatOptions): UIChat {
  checkOptions('createUIChat', options, CHAT_OPTION_RULES);
  return new Chat(options);
}

class Chat implements UIChat {
  private readonly logs: TurnLog[] = [];
  private current: TurnLog | undefined;
  /** Events and notices between turns (a cell that outlived its turn): shown at the start of the next turn. */
  private between: Array<TurnEventLike | ApprovalNotice> = [];
  /** A page's turn being started: its input is the turn's first item. */
  private starting: { resolve(log: TurnLog): void } | undefined;
  /** Follow requests waiting for something to show. */
  private readonly changed = new Set<() => void>();
  private readonly unsubscribe: Array<() => void> = [];
  /** Cells → their `exec` call, across turns (a yielded cell's nested calls come in a later turn). */
  private readonly cells = new Map<string, string | undefined>();

  constructor(private readonly options: UIChatOptions) {
    const on = options.session.on as (type: string, listener: (event: TurnEventLike) => void) => () => void;
    for (const type of EVENT_TYPES) this.unsubscribe.push(on.call(options.session, type, (event) => this.onEvent(event)));
    if (options.approvals) this.unsubscribe.push(options.approvals.subscribe((notice) => this.onEvent(notice)));
  }

  async post(request: Request): Promise<Response> {
    const body = await readChatRequest(request, this.options.maxBodyBytes ?? 4 * 1024 * 1024);
    if (body instanceof Response) return body;
    if (body.trigger !== undefined && body.trigger !== 'submit-message') return textResponse(400, `trigger \`${body.trigger}\` is not supported: the conversation is kept by the session; send a new message`);
    const last = body.messages.at(-1)!;
    if (last.role === 'user') return this.startTurn(last);
    if (last.role === 'assistant') return this.answer(last);
    return textResponse(400, `the last message must be the user's new message or the assistant message with approval answers; got role \`${last.role}\``);
  }

  async follow(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const after = url.searchParams.get('after') ?? undefined;
    const waitMs = Math.min(Math.max(Number(url.searchParams.get('wait')) || 0, 0), this.options.maxFollowWaitMs ?? 30_000);
    let next = this.toFollow(after);
    if (!next && waitMs > 0) next = await this.waitFor(() => this.toFollow(after), waitMs, request.signal);
    if (!next) return new Response(null, { status: 204 });
    return createUIMessageStreamResponse({ stream: next.read(0) });
  }

  messages(): SwitchyardUIMessage[] {
    const turns = this.logs.filter((log) => log.historyStart !== undefined).map((log) => ({ start: log.historyStart!, messageId: log.messageId }));
    return historyToUIMessages(this.options.session.history, { turns });
  }

  close(): void {
    for (const stop of this.unsubscribe.splice(0)) stop();
  }

  private async startTurn(message: UIMessage): Promise<Response> {
    if (this.current && !this.current.finished) return textResponse(409, 'a turn is already running in this chat; follow it (GET …/stream) and send when it has ended');
    if (this.starting) return textResponse(409, 'a turn is already starting in this chat');
    const input = uiMessagesToHistory([message]);
    if (input.length === 0) return textResponse(400, 'the user message has no text or image to send');
    const started = new Promise<TurnLog>((resolve) => (this.starting = { resolve }));
    const running = this.options.session.runTurn({ model: this.options.model, input });
    // a turn's failure is its stream's error chunk; a turn that could not begin is this request's error
    const refused = running.then(
      () => undefined,
      (error: unknown) => error,
    );
    const first = await Promise.race([started, refused.then((error) => ({ error }))]);
    this.starting = undefined;
    if (!(first instanceof TurnLog)) {
      const error = first.error;
      const shuttingDown = (error as SwitchyardError | undefined)?.code === 'SHUTTING_DOWN';
      return textResponse(shuttingDown ? 503 : 500, `the turn could not start: ${(error as Error)?.message ?? String(error)}`);
    }
    return createUIMessageStreamResponse({ stream: first.read(0) });
  }

  private answer(message: UIMessage): Response {
    const answers = approvalAnswers(message);
    if (answers.length === 0) return textResponse(400, 'the last message is an assistant message without approval answers: nothing to do (send a user message)');
    const approvals = this.options.approvals;
    if (!approvals) return textResponse(400, 'this chat asks no approvals of the page (createUIChat without `approvals`)');
    const log = this.logs.findLast((candidate) => answers.some((answer) => candidate.owns(answer.approvalId)));
    for (const answer of answers) {
      const shownOn = log?.partOf(answer.approvalId);
      if (!log?.owns(answer.approvalId)) return textResponse(400, `unknown approval \`${answer.approvalId}\`: no call of this chat waits for it`);
      if (shownOn !== undefined && shownOn !== answer.toolCallId) return textResponse(400, `approval \`${answer.approvalId}\` belongs to call \`${shownOn}\`, not \`${answer.toolCallId}\``);
    }
    // answers to approvals already settled (a timeout, an earlier answer) change nothing; the stream shows how they ended
    for (const answer of answers) approvals.answer(answer);
    return createUIMessageStreamResponse({ stream: log!.read(log!.resumeAt(answers.map((answer) => answer.approvalId))) });
  }

  private onEvent(event: TurnEventLike | ApprovalNotice): void {
    if (event.type === 'turn-start') return this.openTurn((event as unknown as { turnId: string }).turnId);
    const log = this.current && !this.current.finished ? this.current : undefined;
    if (!log) {
      if (this.between.length < MAX_BETWEEN_EVENTS) this.between.push(event);
      return;
    }
    log.add(event);
    if (event.type === 'turn-end') this.recordBoundary(log, event as { result?: { items?: readonly ResponseItem[] } });
    this.notifyChanged();
  }

  private openTurn(turnId: string): void {
    const translator = createTranslator(this.options, this.cells);
    const approvals = this.options.approvals;
    const isPending = (approvalId: string) => approvals?.pending.some((pending) => pending.approvalId === approvalId) ?? false;
    const log = new TurnLog(turnId, `turn-${turnId}`, translator, isPending);
    for (const event of this.between.splice(0)) log.add(event);
    this.current = log;
    this.logs.push(log);
    if (this.logs.length > (this.options.keepTurns ?? 50)) this.logs.shift();
    this.starting?.resolve(log);
    this.notifyChanged();
  }

  /** Where the turn's assistant message begins in the history (after the page's input, when it had one). */
  private recordBoundary(log: TurnLog, end: { result?: { items?: readonly ResponseItem[] } }): void {
    const items = end.result?.items;
    if (!items || items.length === 0) return;
    const history = this.options.session.history;
    const start = history.length - items.length;
    const first = items[0] as { type: string; role?: string };
    log.historyStart = start + (first.type === 'message' && first.role === 'user' ? 1 : 0);
  }

  /**
   * What a page whose last message is `after` has not seen: that turn again once it goes on past the
   * answers it waited for (an approval that timed out), else the turn after it; for an unknown
   * `after`, the running turn. A turn waiting for the page's answers is not offered again until it moves.
   */
  private toFollow(after: string | undefined): TurnLog | undefined {
    const index = after === undefined ? -1 : this.logs.findIndex((log) => log.messageId === after);
    const log = index === -1 ? (this.current && !this.current.finished ? this.current : undefined) : this.logs[index];
    if (index !== -1 && log!.finished) return this.logs[index + 1];
    return log && !log.paused ? log : undefined;
  }

  /** Waits until `find` finds something (checked at every change of the chat), `waitMs` passes or the request goes away. */
  private waitFor(find: () => TurnLog | undefined, waitMs: number, signal: AbortSignal): Promise<TurnLog | undefined> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.changed.delete(check);
        signal.removeEventListener('abort', done);
        resolve(signal.aborted ? undefined : find());
      };
      const check = () => {
        if (find()) done();
      };
      const timer = setTimeout(done, waitMs);
      this.changed.add(check);
      if (signal.aborted) done();
      else signal.addEventListener('abort', done, { once: true });
    });
  }

  private notifyChanged(): void {
    for (const check of [...this.changed]) check();
  }
}
