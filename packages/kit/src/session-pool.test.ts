import { describe, expect, it } from 'vitest';
import { SessionPool } from './session-pool';

class Thing {
  closed = 0;
  async close(): Promise<void> {
    this.closed++;
  }
}

describe('SessionPool', () => {
  it('keys by session and key: the same pair gets the same value, another session or key its own', () => {
    const pool = new SessionPool<Thing>();
    const a = pool.get('s1', 'k', () => new Thing());
    expect(pool.get('s1', 'k', () => new Thing())).toBe(a);
    expect(pool.get('s2', 'k', () => new Thing())).not.toBe(a);
    expect(pool.get('s1', 'other', () => new Thing())).not.toBe(a);
    // A session id and key that would join to the same text stay apart.
    expect(pool.get('s1\u0000k', '', () => new Thing())).not.toBe(a);
    expect(pool.size()).toBe(4);
    expect(pool.size('s1')).toBe(2);
  });

  it('close(sessionId) ends only that session’s values; close() ends the rest; a closed pair is made anew', async () => {
    const pool = new SessionPool<Thing>();
    const a = pool.get('s1', 'k', () => new Thing());
    const b = pool.get('s2', 'k', () => new Thing());
    await pool.close('s1');
    expect([a.closed, b.closed]).toEqual([1, 0]);
    expect(pool.get('s1', 'k', () => new Thing())).not.toBe(a);
    await pool.close();
    expect(b.closed).toBe(1);
    expect(pool.size()).toBe(0);
  });
});
