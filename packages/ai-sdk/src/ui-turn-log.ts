import type { UIMessageChunk } from 'ai';
import type { ApprovalNotice, TurnEventLike, UIChunkTranslator } from './ui-translate';

/** Where a response ends so the page can answer: the chunk index, and the approvals waiting there. */
interface Pause {
  readonly at: number;
  readonly approvalIds: readonly string[];
}

/**
 * One turn's UI message stream, kept whole: every reader (the request that started the turn, the
 * request that answers its approvals, a follower) reads it from an offset. The turn runs on its
 * own; readers come and go.
 */
export class TurnLog {
  readonly chunks: UIMessageChunk[] = [];
  private readonly pauses: Pause[] = [];
  /** Each approval's request chunk, by index. */
  private readonly requestedAt = new Map<string, number>();
  private done = false;
  private readonly wakers = new Set<() => void>();
  /** Index in the session's history of the assistant message's first item, once the turn recorded it. */
  historyStart: number | undefined;

  constructor(
    readonly turnId: string,
    readonly messageId: string,
    private readonly translator: UIChunkTranslator,
    private readonly isPending: (approvalId: string) => boolean,
  ) {}

  get finished(): boolean {
    return this.done;
  }

  /** The turn waits for the page's answers: a reader gets nothing more until they come (or time out). */
  get paused(): boolean {
    return !this.done && this.pausedAt(this.chunks.length);
  }

  get finishReason(): 'stop' | 'error' | 'other' {
    return this.translator.outcome?.finishReason ?? 'other';
  }

  /** Feeds one event (or an approvals notice); a wait for answers becomes a pause. */
  add(input: TurnEventLike | ApprovalNotice): void {
    if (this.done) return;
    const isNotice = input.type === 'approval-requested' || input.type === 'approval-settled';
    this.append(isNotice ? this.translator.approval(input as ApprovalNotice) : this.translator.translate(input));
    if (input.type === 'turn-end') {
      this.append(this.translator.closeParts());
      this.done = true;
    } else if (this.translator.waitingForApproval && this.pauses.at(-1)?.at !== this.chunks.length) {
      // text streams into new parts after the pause: a response that continues starts without the old ones
      this.append(this.translator.closeParts());
      this.pauses.push({ at: this.chunks.length, approvalIds: this.translator.pendingApprovals() });
    }
    this.wake();
  }

  /** True when this turn asked for the approval. */
  owns(approvalId: string): boolean {
    return this.requestedAt.has(approvalId);
  }

  /** The tool part (`toolCallId`) an approval of this turn is shown on. */
  partOf(approvalId: string): string | undefined {
    return this.translator.partOf(approvalId);
  }

  /**
   * Where a response answering these approvals continues: where the page's last response ended —
   * the first pause after the last of their requests (the page saw those requests, then stopped there).
   */
  resumeAt(approvalIds: readonly string[]): number {
    const seen = Math.max(...approvalIds.map((id) => this.requestedAt.get(id) ?? -1));
    return this.pauses.find((pause) => pause.at > seen)?.at ?? this.chunks.length;
  }

  /**
   * Reads the log from `from` as a response body: `start`, the chunks, then `finish` at the turn's end —
   * or at a pause whose approvals still wait (`finish` with `tool-calls`: the page answers in its next request).
   */
  read(from: number): ReadableStream<UIMessageChunk> {
    let index = from;
    let cancelled = false;
    let wake: (() => void) | undefined;
    return new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        controller.enqueue({ type: 'start', messageId: this.messageId });
      },
      pull: async (controller) => {
        for (;;) {
          if (cancelled) return;
          if (this.pausedAt(index) && index > from) {
            controller.enqueue({ type: 'finish', finishReason: 'tool-calls' });
            controller.close();
            return;
          }
          if (index < this.chunks.length) {
            controller.enqueue(this.chunks[index++]);
            return;
          }
          if (this.done) {
            controller.enqueue({ type: 'finish', finishReason: this.finishReason });
            controller.close();
            return;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            this.wakers.add(resolve);
          });
        }
      },
      cancel: () => {
        cancelled = true;
        if (wake) {
          this.wakers.delete(wake);
          wake();
        }
      },
    });
  }

  /** A pause at `index` whose approvals are not all settled. */
  private pausedAt(index: number): boolean {
    return this.pauses.some((pause) => pause.at === index && pause.approvalIds.some((id) => this.isPending(id)));
  }

  private append(chunks: readonly UIMessageChunk[]): void {
    for (const chunk of chunks) {
      if (chunk.type === 'tool-approval-request') this.requestedAt.set(chunk.approvalId, this.chunks.length);
      this.chunks.push(chunk);
    }
  }

  private wake(): void {
    for (const resolve of [...this.wakers]) resolve();
    this.wakers.clear();
  }
}
