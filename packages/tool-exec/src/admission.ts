/** At most this many exec_command calls of one session run at once by default; the rest wait. */
export const DEFAULT_MAX_CONCURRENT_COMMANDS = 16;

interface Gate {
  active: number;
  readonly waiting: Array<() => void>;
}

/**
 * Admission control per session: `acquire` resolves once one of `limit` slots of the session is
 * free (first come, first served) and rejects with `onAbort()` when the signal fires while it
 * waits. Hand-written (a dozen lines) because the well-known limiters (p-limit, p-queue) cannot drop
 * a waiting call when its own signal fires, and keying them per session would need a map anyway.
 */
export class SessionAdmission {
  private readonly gates = new Map<string, Gate>();

  constructor(private readonly limit: number) {}

  async acquire(sessionId: string, signal: AbortSignal, onAbort: () => Error): Promise<() => void> {
    let gate = this.gates.get(sessionId);
    if (!gate) this.gates.set(sessionId, (gate = { active: 0, waiting: [] }));
    if (signal.aborted) throw onAbort();
    // A full gate hands a slot over on release (`active` unchanged), so no newcomer can take it first.
    if (gate.active >= this.limit) await this.wait(gate, signal, onAbort);
    else gate.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(sessionId, gate as Gate);
    };
  }

  /** Calls of `sessionId` running now (for tests and hosts' metrics). */
  active(sessionId: string): number {
    return this.gates.get(sessionId)?.active ?? 0;
  }

  private wait(gate: Gate, signal: AbortSignal, onAbort: () => Error): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const admit = () => {
        signal.removeEventListener('abort', abandon);
        resolve();
      };
      const abandon = () => {
        const index = gate.waiting.indexOf(admit);
        if (index >= 0) gate.waiting.splice(index, 1);
        reject(onAbort());
      };
      gate.waiting.push(admit);
      signal.addEventListener('abort', abandon, { once: true });
    });
  }

  private release(sessionId: string, gate: Gate): void {
    const next = gate.waiting.shift();
    if (next) return next();
    gate.active--;
    if (gate.active === 0) this.gates.delete(sessionId);
  }
}
