import type { ApprovalDecision, ApprovalRequest } from '@switchyard/protocol';

/** Which cell asks: its id, and the call id of the `exec` call that created it (either may be unknown). */
export interface CellApprovalSource {
  readonly cellId?: string;
  readonly execCallId?: string;
}

/** The `elicitation/create` params of an approval: a form with no fields, where `accept` approves. */
export interface ApprovalElicitation {
  readonly mode: 'form';
  readonly message: string;
  readonly requestedSchema: { readonly type: 'object'; readonly properties: Record<string, never> };
}

/** One approval a cell waits for. */
export interface PendingApproval {
  /** Unique on the connection for its lifetime (`approval-N`): the `inputRequests` key. */
  readonly key: string;
  readonly source: CellApprovalSource;
  readonly elicitation: ApprovalElicitation;
  /** Settles the approval from an elicitation answer: `accept` approves, anything else denies. */
  answer(response: unknown): void;
  /** Settles the approval as denied (no way to ask, the task was cancelled, the connection closed). */
  deny(): void;
}

/**
 * Something that surfaces approvals to the client: a task following a cell (as `input_required`),
 * or a call that waits on one (as an `input_required` result). `changed` runs whenever an approval
 * it matches arrives or settles.
 */
export interface ApprovalObserver {
  matches(source: CellApprovalSource): boolean;
  changed(): void;
}

/** How approvals are asked on a 2025-11-25 connection: an `elicitation/create` request, at once. */
export type LegacyElicit = (approval: PendingApproval) => Promise<unknown>;

/** The text a person reads: what wants to run, and why. */
export function approvalMessage(request: ApprovalRequest): string {
  const reason = request.reason ? ` Reason: ${request.reason}` : '';
  if (request.kind === 'exec' && request.command !== undefined) {
    const where = request.cwd ? ` in ${request.cwd}` : '';
    const outside = request.escalated ? ' outside the sandbox' : '';
    return `Allow \`${request.toolName}\` to run \`${request.command}\`${where}${outside}?${reason}`;
  }
  if (request.kind === 'hook') return `A hook asks whether \`${request.toolName}\` may run.${reason}`;
  const input = request.input === undefined ? '' : ` with ${JSON.stringify(request.input)}`;
  return `Allow the call of \`${request.toolName}\`${input}?${reason}`;
}

function decision(response: unknown): ApprovalDecision {
  return typeof response === 'object' && response !== null && (response as { action?: unknown }).action === 'accept' ? 'approved' : 'denied';
}

/**
 * The approvals of one connection. A cell's approval waits here until it is answered: on a
 * 2025-11-25 connection it is asked at once with `elicitation/create` (`legacyElicit`); on a
 * 2026-07-28 connection the observer of its cell (a task or a call) surfaces it, and one that
 * arrives while nothing observes the cell waits for the next observer. Closing denies them all.
 */
export class ApprovalDesk {
  private readonly pending = new Map<string, PendingApproval>();
  private readonly observers = new Set<ApprovalObserver>();
  private sequence = 0;
  private closed = false;

  constructor(private readonly legacyElicit?: LegacyElicit) {}

  /** Waits for a person's answer; resolves `denied` when it cannot be asked or the request is cancelled. */
  request(request: ApprovalRequest, source: CellApprovalSource): Promise<ApprovalDecision> {
    if (this.closed || request.signal.aborted) return Promise.resolve('denied');
    return new Promise<ApprovalDecision>((resolve) => {
      const key = `approval-${++this.sequence}`;
      const settle = (result: ApprovalDecision) => {
        if (!this.pending.delete(key)) return;
        request.signal.removeEventListener('abort', onAbort);
        resolve(result);
        this.notify(source);
      };
      const onAbort = () => settle('denied');
      const approval: PendingApproval = {
        key,
        source,
        elicitation: { mode: 'form', message: approvalMessage(request), requestedSchema: { type: 'object', properties: {} } },
        answer: (response) => settle(decision(response)),
        deny: () => settle('denied'),
      };
      this.pending.set(key, approval);
      request.signal.addEventListener('abort', onAbort, { once: true });
      this.notify(source);
      if (this.legacyElicit) {
        this.legacyElicit(approval).then(
          (response) => approval.answer(response),
          () => approval.deny(),
        );
      }
    });
  }

  /** Registers an observer (told at once when approvals it matches are waiting); returns the unregister function. */
  observe(observer: ApprovalObserver): () => void {
    this.observers.add(observer);
    if (this.pendingFor(observer).length > 0) observer.changed();
    return () => this.observers.delete(observer);
  }

  /** The waiting approvals an observer matches, oldest first. */
  pendingFor(observer: ApprovalObserver): PendingApproval[] {
    return [...this.pending.values()].filter((approval) => observer.matches(approval.source));
  }

  /** Answers waiting approvals by key; unknown or settled keys are ignored (the spec asks servers to). */
  answer(responses: Record<string, unknown>, observer: ApprovalObserver): void {
    for (const approval of this.pendingFor(observer)) {
      if (Object.hasOwn(responses, approval.key)) approval.answer(responses[approval.key]);
    }
  }

  /** Denies every waiting approval and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const approval of [...this.pending.values()]) approval.deny();
    this.observers.clear();
  }

  private notify(source: CellApprovalSource): void {
    for (const observer of [...this.observers]) {
      if (observer.matches(source)) observer.changed();
    }
  }
}
