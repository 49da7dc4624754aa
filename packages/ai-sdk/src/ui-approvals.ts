import { randomUUID } from 'node:crypto';
import { checkOptions, optionRules as rule } from '@switchyard/kit/internal';
import type { ApprovalDecision, ApprovalProvider, ApprovalRequest } from '@switchyard/protocol';
import type { ApprovalNotice } from './ui-translate';

/** Options of {@link createUIApprovals}. */
export interface UIApprovalsOptions {
  /**
   * How long a request waits for the page's answer, in ms, before it counts as denied (the call's
   * output says so, and the page's part is answered `approved: false` with the reason). Default
   * 300 000 (five minutes).
   */
  timeoutMs?: number;
}

/** A request waiting for the page's answer. */
export interface PendingUIApproval {
  readonly approvalId: string;
  /** The session's request (its `signal` left out). */
  readonly request: Omit<ApprovalRequest, 'signal'>;
}

/** What {@link UIApprovals.answer} did: resolved a waiting request, found it already settled, or knows no such id. */
export type UIApprovalAnswerStatus = 'answered' | 'settled' | 'unknown';

/**
 * The approval provider of a session whose person sits in a browser: give it to `createSession({
 * approvals })` and to `createUIChat({ approvals })`. Each request becomes the UI stream's
 * `tool-approval-request`; the page's answer (the next request `useChat` / `Chat` sends) resolves it.
 */
export interface UIApprovals extends ApprovalProvider {
  /** Resolves a waiting request with the page's answer. Never throws. */
  answer(answer: { approvalId: string; approved: boolean; reason?: string }): UIApprovalAnswerStatus;
  /** The requests waiting now, oldest first. */
  readonly pending: readonly PendingUIApproval[];
  /** Reports each request and each settlement (answer, timeout, cancelled call); returns the unsubscribe function. */
  subscribe(listener: (notice: ApprovalNotice) => void): () => void;
}

interface Waiting {
  readonly request: ApprovalRequest;
  readonly settle: (approved: boolean, reason?: string) => void;
}

const DEFAULT_TIMEOUT_MS = 300_000;
/** Settled ids remembered so a late answer is told apart from an unknown id. */
const REMEMBERED_SETTLED = 1_000;

/**
 * Creates the bridge between a session's approvals and a page. A request waits until the page
 * answers, the call is cancelled (denied), or `timeoutMs` passes (denied, with the reason).
 */
export function createUIApprovals(options: UIApprovalsOptions = {}): UIApprovals {
  checkOptions('createUIApprovals', options, { timeoutMs: rule.number({ min: 1, max: 2_147_483_647, integer: true }) }, { optional: true });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const waiting = new Map<string, Waiting>();
  const settled: string[] = [];
  const listeners = new Set<(notice: ApprovalNotice) => void>();
  const tell = (notice: ApprovalNotice) => {
    for (const listener of listeners) {
      try {
        listener(notice);
      } catch {
        // a stream that failed to take a notice costs itself, never the call
      }
    }
  };
  return {
    requestApproval(request: ApprovalRequest): Promise<ApprovalDecision> {
      const approvalId = `approval-${randomUUID()}`;
      return new Promise<ApprovalDecision>((resolve) => {
        const onAbort = () => settle(false, 'the call was cancelled');
        const timer = setTimeout(() => settle(false, `no answer within ${formatSeconds(timeoutMs)}: denied`), timeoutMs);
        timer.unref?.();
        function settle(approved: boolean, reason?: string) {
          if (!waiting.delete(approvalId)) return;
          clearTimeout(timer);
          request.signal?.removeEventListener('abort', onAbort);
          settled.push(approvalId);
          if (settled.length > REMEMBERED_SETTLED) settled.shift();
          tell({ type: 'approval-settled', approvalId, approved, ...(reason ? { reason } : {}) });
          resolve(approved ? 'approved' : 'denied');
        }
        waiting.set(approvalId, { request, settle });
        if (request.signal?.aborted) return onAbort();
        request.signal?.addEventListener('abort', onAbort, { once: true });
        tell({ type: 'approval-requested', approvalId, request });
      });
    },
    answer({ approvalId, approved, reason }) {
      const entry = waiting.get(approvalId);
      if (entry) {
        entry.settle(approved === true, typeof reason === 'string' && reason !== '' ? reason : undefined);
        return 'answered';
      }
      return settled.includes(approvalId) ? 'settled' : 'unknown';
    },
    get pending() {
      return [...waiting].map(([approvalId, { request }]) => ({ approvalId, request: withoutSignal(request) }));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

function withoutSignal(request: ApprovalRequest): Omit<ApprovalRequest, 'signal'> {
  const { signal: _signal, ...rest } = request;
  return rest;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
