import { describe, expect, it } from 'vitest';
import type { CellHost, CodeModeRuntime, CodeModeSession } from '@switchyard/protocol';
import { createCodeMode } from './create-code-mode';

// The service's durable side, for a session store: journal updates a runtime reports reach the
// session's listener (and its promise back), the runtime session's state is exported and restored.

function runtimeWith(session: Partial<CodeModeSession> & { exportState?(): unknown; restore?(state: unknown, options: unknown): Promise<unknown> }) {
  const hosts: CellHost[] = [];
  const runtime: CodeModeRuntime = {
    openSession(host) {
      hosts.push(host);
      return { createCell: async () => ({}) as never, observe: async () => ({}) as never, terminate: async () => ({}) as never, shutdown: async () => undefined, ...session } as CodeModeSession;
    },
    shutdown: async () => undefined,
  };
  return { runtime, hosts };
}

describe('CodeModeService: durable state for a session store', () => {
  it('a journal update the runtime reports reaches that session’s listener, and the runtime waits on its promise', async () => {
    const { runtime, hosts } = runtimeWith({});
    const { service } = createCodeMode({ runtime });
    const heard: unknown[] = [];
    let release: () => void = () => undefined;
    const stop = service.onJournal('s1', (update) => {
      heard.push(update);
      return new Promise<void>((resolve) => (release = resolve));
    });
    service.session('s1');
    service.session('s2');
    const host = hosts[0] as CellHost & { journal(update: unknown): void | Promise<void> };
    let durable = false;
    const pending = Promise.resolve(host.journal({ type: 'call-issued', cellId: 'c', call: { id: 'tool-1' } })).then(() => (durable = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual([{ type: 'call-issued', cellId: 'c', call: { id: 'tool-1' } }]);
    expect(durable).toBe(false);
    release();
    await pending;
    expect(durable).toBe(true);
    // another session's runtime reports to nobody; after stop, neither does this one
    expect((hosts[1] as CellHost & { journal(update: unknown): unknown }).journal({ type: 'x' })).toBeUndefined();
    stop();
    expect(host.journal({ type: 'y' })).toBeUndefined();
    expect(heard).toHaveLength(1);
  });

  it('exportState reads the runtime session’s; restore hands the state back and says which cells resumed', async () => {
    const restored: unknown[] = [];
    const { runtime } = runtimeWith({
      exportState: () => ({ format: 'switchyard.code-mode-session', stored: [['k', '1']] }),
      restore: async (state, options) => {
        restored.push([state, options]);
        return { cells: [{ cellId: 'a', resumed: true }, { cellId: 'b', resumed: false, code: 'INVALID_JOURNAL', error: 'journal of another session' }] };
      },
    });
    const { service } = createCodeMode({ runtime });
    expect(service.exportState('never-opened')).toBeUndefined();
    const result = await service.restore('s1', { state: 1 }, [], { hostRestarted: true });
    expect(restored).toEqual([[{ state: 1 }, { hostRestarted: true }]]);
    expect(result).toEqual({ resumed: ['a'], lost: [{ cellId: 'b', reason: 'journal of another session' }] });
    expect(service.exportState('s1')).toEqual({ format: 'switchyard.code-mode-session', stored: [['k', '1']] });
  });

  it('a runtime session without durable state exports nothing and restores nothing', async () => {
    const { runtime } = runtimeWith({});
    const { service } = createCodeMode({ runtime });
    expect(await service.restore('s1', { state: 1 }, [], { hostRestarted: true })).toEqual({ resumed: [], lost: [] });
    expect(service.exportState('s1')).toBeUndefined();
  });
});
