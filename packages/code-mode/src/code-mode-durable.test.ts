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
    const journal = hosts[0].journal!;
    let durable = false;
    const update = { type: 'call-issued', cellId: 'c', call: { id: 'tool-1', tool: 't', hash: '0' } } as const;
    const pending = Promise.resolve(journal(update)).then(() => (durable = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual([update]);
    expect(durable).toBe(false);
    release();
    await pending;
    expect(durable).toBe(true);
    // another session takes no updates (its runtime builds none); after stop, neither does this one
    expect(hosts[1].journal).toBeUndefined();
    stop();
    expect(hosts[0].journal).toBeUndefined();
    expect(heard).toHaveLength(1);
  });

  it('restore hands the runtime the state and the updates after it; a cell opened by an update is known to the broker, one closed is not', async () => {
    const restored: unknown[] = [];
    const { runtime } = runtimeWith({
      restore: async (state, options) => {
        restored.push([state, options]);
        return { cells: [{ cellId: 'c2', resumed: true }] };
      },
    });
    const { service } = createCodeMode({ runtime });
    const tools = [{ codeModeName: 'echo', name: 'echo', kind: 'function' as const }];
    const state = { format: 'switchyard.code-mode', version: 1, runtime: { format: 'switchyard.code-mode-session' }, cells: [{ cellId: 'c1', execCallId: 'x1', tools }] } as never;
    const journal = [
      { type: 'cell-opened', cellId: 'c2', record: {}, broker: { cellId: 'c2', execCallId: 'x2', tools } },
      { type: 'cell-closed', cellId: 'c1', record: {} },
    ] as never;
    expect(await service.restore('s1', state, { journal })).toEqual({ cells: [{ cellId: 'c2', resumed: true }] });
    expect(restored).toEqual([[{ format: 'switchyard.code-mode-session' }, { hostRestarted: true, journal }]]);
    const broker = service.session('s1').broker;
    expect([broker.execCallId('c1'), broker.execCallId('c2')]).toEqual([undefined, 'x2']);
  });

  it('a runtime session without durable state exports nothing; restoring onto it is a CONFIG error', async () => {
    const { runtime } = runtimeWith({});
    const { service } = createCodeMode({ runtime });
    service.session('s1');
    expect(service.exportState('s1')).toBeUndefined();
    const state = { format: 'switchyard.code-mode', version: 1, runtime: {}, cells: [] } as never;
    await expect(service.restore('s1', state)).rejects.toMatchObject({ code: 'CONFIG' });
  });
});
