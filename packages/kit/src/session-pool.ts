/** Something a {@link SessionPool} holds: it can be ended, and says when it is gone. */
export interface Closeable {
  close(): Promise<void>;
}

/**
 * Long-lived per-session things (helper processes, command spawners) keyed by session and by a
 * key the caller chooses (a workspace and a sandbox policy): two sessions never share one, and one
 * session under two keys gets two. Each is created on first use; `close(sessionId)` ends a
 * session's, `close()` every one, and waits until they are gone.
 */
export class SessionPool<T extends Closeable> {
  private readonly entries = new Map<string, { sessionId: string; value: T }>();

  /** The value of `sessionId` for `key`, made by `create` on first use. */
  get(sessionId: string, key: string, create: () => T): T {
    const id = JSON.stringify([sessionId, key]);
    let entry = this.entries.get(id);
    if (!entry) {
      entry = { sessionId, value: create() };
      this.entries.set(id, entry);
    }
    return entry.value;
  }

  /** How many values the pool holds (of `sessionId`, or of every session). */
  size(sessionId?: string): number {
    let count = 0;
    for (const entry of this.entries.values()) if (sessionId === undefined || entry.sessionId === sessionId) count++;
    return count;
  }

  /** Ends the values of `sessionId` (every value without one) and waits until they are gone. */
  async close(sessionId?: string): Promise<void> {
    const ending = [...this.entries].filter(([, entry]) => sessionId === undefined || entry.sessionId === sessionId);
    for (const [id] of ending) this.entries.delete(id);
    await Promise.all(ending.map(([, entry]) => entry.value.close()));
  }
}
