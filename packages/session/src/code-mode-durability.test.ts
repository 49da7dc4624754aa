import { afterEach, describe, expect, it } from 'vitest';
import type { JsonValue, ResponseItem, SessionCommit, SessionStore } from '@switchyard/protocol';
import { createCodeMode, type CodeMode } from '@switchyard/code-mode';
import { createCodeModeRuntime } from '@switchyard/code-mode-runtime';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import { createSqliteStore } from './sqlite-store';
import type { Session } from './session-types';
import { SESSION_EXPORT_FORMAT, SESSION_STATE_FORMAT, type SessionExport } from './durable-state';

// The seam to durable cells: a Code Mode's exportState / service.onJournal / restoreSession get its
// journal written ahead into the store and its state handed back on resume. Code Mode's side is
// played here by functions on a real Code Mode (what they are given and answer is checked; the
// real durable cells through a store are tools/reliability's durable-resume).

interface DurableFake {
  codeMode: CodeMode;
  journal(sessionId: string, update: JsonValue): Promise<void>;
  restored: Array<{ state: JsonValue; options: { hostRestarted?: boolean; journal?: readonly unknown[]; background?: unknown } }>;
}

function durableCodeMode(result: { resumed: string[]; lost: Array<{ cellId: string; reason: string }> }): DurableFake {
  const codeMode = createCodeMode({ runtime: createCodeModeRuntime({ isolation: 'in-process' }) });
  const listeners = new Map<string, (update: JsonValue) => Promise<void>>();
  const restored: DurableFake['restored'] = [];
  Object.assign(codeMode.service, {
    onJournal: (sessionId: string, listener: (update: JsonValue) => Promise<void>) => {
      listeners.set(sessionId, listener);
      return () => listeners.delete(sessionId);
    },
  });
  Object.assign(codeMode, {
    exportState: () => ({ format: 'fake-code-mode', cells: 1 }),
    restoreSession: async (_sessionId: string, state: JsonValue, options: DurableFake['restored'][number]['options']) => {
      restored.push({ state, options });
      const lost = result.lost.map(({ cellId, reason }) => ({ cellId, resumed: false, code: 'LIMIT_EXCEEDED', error: reason }));
      return { cells: [...result.resumed.map((cellId) => ({ cellId, resumed: true })), ...lost] };
    },
  });
  return { codeMode, restored, journal: (sessionId, update) => listeners.get(sessionId)!(update) };
}

const sessions: Session[] = [];
const stores: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.shutdown();
  for (const store of stores.splice(0)) await store.close();
});

describe('the durable-cells seam', () => {
  it('a journal update is in the store when its promise resolves; updates of one tick share one commit', async () => {
    const sqlite = createSqliteStore(':memory:');
    stores.push(sqlite);
    const commits: SessionCommit[] = [];
    const store: SessionStore = { lease: sqlite.lease, load: sqlite.load, commit: (id, commit) => (commits.push(commit), sqlite.commit(id, commit)) };
    const fake = durableCodeMode({ resumed: [], lost: [] });
    const session = createSession({ toolMode: 'code-mode', tools: [], codeMode: fake.codeMode, store, sessionId: 'journaled' });
    sessions.push(session);
    await session.ready;
    const before = commits.length;
    const first = fake.journal('journaled', { type: 'call-issued', id: 'tool-1' });
    const second = fake.journal('journaled', { type: 'call-issued', id: 'tool-2' });
    await Promise.all([first, second]);
    expect(commits.length - before).toBe(1);
    expect((await sqlite.load('journaled'))?.journal).toEqual([
      { type: 'call-issued', id: 'tool-1' },
      { type: 'call-issued', id: 'tool-2' },
    ]);
    // the next commit of the session's state absorbs them (Code Mode's export includes them)
    await session.runTurn({ model: createScriptedModel([[{ type: 'message', role: 'assistant', content: 'ok' }]]), input: 'x' });
    const loaded = await sqlite.load('journaled');
    expect(loaded?.journal).toEqual([]);
    expect((loaded?.state as { codeMode?: unknown }).codeMode).toEqual({ format: 'fake-code-mode', cells: 1 });
  });

  it('a write-ahead append to a store that fails rejects (the tool is not run), naming the session', async () => {
    const sqlite = createSqliteStore(':memory:');
    stores.push(sqlite);
    let failing = false;
    const store: SessionStore = { lease: sqlite.lease, load: sqlite.load, commit: (id, commit) => (failing ? Promise.reject(new Error('disk full')) : sqlite.commit(id, commit)) };
    const fake = durableCodeMode({ resumed: [], lost: [] });
    const session = createSession({ toolMode: 'code-mode', tools: [], codeMode: fake.codeMode, store, sessionId: 'failing' });
    sessions.push(session);
    await session.ready;
    failing = true;
    await expect(fake.journal('failing', { type: 'call-issued', id: 'tool-1' })).rejects.toMatchObject({ code: 'STORE_FAILED', message: 'session failing: the store failed: disk full' });
  });

  it('on resume Code Mode gets its state and the journal after it; an exec call left open is answered by its resumed cell, a lost cell is told to the model once', async () => {
    const fake = durableCodeMode({ resumed: ['c-resumed'], lost: [{ cellId: 'c-lost', reason: 'its journal passed 1048576 bytes (maxJournalBytes)' }] });
    const history: ResponseItem[] = [
      { type: 'message', role: 'user', content: 'go' },
      { type: 'custom_tool_call', call_id: 'x2', name: 'exec', input: 'yielded cell' },
      { type: 'custom_tool_call_output', call_id: 'x2', output: 'Script running with cell ID c-lost' },
      { type: 'custom_tool_call', call_id: 'x1', name: 'exec', input: 'running cell' },
    ];
    const exported: SessionExport = {
      format: SESSION_EXPORT_FORMAT,
      version: 1,
      sessionId: 'resumed',
      history,
      journal: [{ type: 'call-settled', id: 'tool-3' }],
      state: {
        format: SESSION_STATE_FORMAT,
        version: 1,
        sessionId: 'resumed',
        usedTokens: 1234,
        pending: [],
        work: [],
        cells: [
          { cellId: 'c-lost', execCallId: 'x2' },
          { cellId: 'c-resumed', execCallId: 'x1' },
        ],
        codeMode: { format: 'fake-code-mode', cells: 2 },
      },
    };
    const session = createSession({ toolMode: 'code-mode', tools: [], codeMode: fake.codeMode, background: true, restore: exported });
    sessions.push(session);
    await session.ready;
    expect(session.export().state.usedTokens).toBe(1234);
    expect(fake.restored).toHaveLength(1);
    expect(fake.restored[0]).toMatchObject({ state: { format: 'fake-code-mode', cells: 2 }, options: { hostRestarted: true, journal: [{ type: 'call-settled', id: 'tool-3' }] } });
    expect(fake.restored[0].options.background).toBeDefined();
    expect(session.history.at(-1)).toEqual({
      type: 'custom_tool_call_output',
      call_id: 'x1',
      output: 'Script running with cell ID c-resumed\n(its host restarted; the cell resumed from its journal, and its end follows when it completes)',
    });
    const model = createScriptedModel([[{ type: 'message', role: 'assistant', content: 'seen' }], [{ type: 'message', role: 'assistant', content: 'again' }]]);
    await session.runTurn({ model, input: 'status?' });
    const lost = model.requests[0].input.filter((item) => (item as { call_id?: string }).call_id === 'x2' && item.type === 'custom_tool_call_output');
    expect(lost.map((item) => (item as { output: string }).output)).toEqual([
      'Script running with cell ID c-lost',
      'Script failed\nexec cell c-lost was lost: its host restarted while it ran and it could not be resumed (its journal passed 1048576 bytes (maxJournalBytes)); its nested calls that completed are not run again by this message. Run what is still needed in a new cell.',
    ]);
    await session.runTurn({ model, input: 'and now?' });
    expect(model.requests[1].input.filter((item) => (item as { call_id?: string }).call_id === 'x2')).toHaveLength(3);
    expect(session.export().state.cells).toEqual([{ cellId: 'c-resumed', execCallId: 'x1' }]);
  });
});
