import type { RuntimeEventMessage } from './runtime-client';
import { pairBytes } from './host-limits';
import type { Binding, HostCell, RemoteCore } from './remote-binding';
import type { CallProxy } from './remote-calls';

/**
 * What a runtime sends a `RemoteSession` on its own, checked against the host's limits (the
 * runtime is untrusted): nested calls (to the call proxy), `notify` texts (bounded per cell),
 * `commit` parts (bounded per session), `cell-closed`, limit reports, and journal entries (kept in
 * the cell's journal, ahead of whatever they may cause).
 */
export class RuntimeEvents {
  constructor(
    private readonly core: RemoteCore,
    private readonly calls: CallProxy,
    private readonly closed: (cell: HostCell) => void,
  ) {}

  onEvent(binding: Binding, message: RuntimeEventMessage): void {
    if (binding.lost) {
      // Results of a dropped binding are not wanted; calls must still be answered once.
      if (message.t === 'call') binding.lease.client.post({ t: 'call-result', call: message.call, ok: false, error: 'exec cell ended' });
      return;
    }
    const { host } = this.core.settings;
    const cell = 'cellId' in message ? this.core.cells.get(message.cellId) : undefined;
    const here = cell !== undefined && cell.binding === binding ? cell : undefined;
    switch (message.t) {
      case 'call':
        return this.calls.onCall(binding, message);
      case 'call-abort':
        return this.calls.onAbort(binding, message.call);
      case 'journal':
        here?.journal?.appendEntries(message.entries);
        return;
      case 'notify':
        if (here && this.notifyFits(here, message.text)) {
          here.journal?.notified(message.text);
          this.core.safely(() => host.notify({ cellId: here.id, text: message.text }));
        }
        return;
      case 'commit':
        if (here) this.onCommit(binding, here, message);
        return;
      case 'cell-closed':
        if (here) this.closed(here);
        return;
      case 'cell-event':
        this.core.safely(() => host.runtimeEvent?.(message.event));
        return;
    }
  }

  /** The runtime made `cell` break a host limit: its completion fails with `message`, the host hears it once. */
  failCell(cell: HostCell, message: string): void {
    const { account } = cell;
    if (account.failure !== undefined) return;
    account.failure = message;
    this.core.failures.set(cell.id, message);
    cell.binding.stagedBytes -= account.stagedBytes;
    account.staged = [];
    account.stagedBytes = 0;
    this.core.safely(() => this.core.settings.host.runtimeEvent?.({ type: 'cell-limit-exceeded', cellId: cell.id, message }));
  }

  /** A notify within the cell's notify bytes (and the value size limit); over it, the cell fails. */
  private notifyFits(cell: HostCell, text: string): boolean {
    const { account } = cell;
    if (account.failure !== undefined) return false;
    const { maxNotifyBytes, maxValueChars } = this.core.limits;
    if (text.length > maxValueChars) {
      this.failCell(cell, `exec notify limit exceeded: a notify text of ${text.length} characters is over the limit of ${maxValueChars} characters per value`);
      return false;
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    if (account.notifyBytes + bytes > maxNotifyBytes) {
      this.failCell(cell, `exec notify limit exceeded: the cell's notify texts passed ${maxNotifyBytes} bytes (maxOutputBytes)`);
      return false;
    }
    account.notifyBytes += bytes;
    return true;
  }

  /** Stages commit parts (bounded by the stored budget) and commits the last one within the session's budget, once per cell. */
  private onCommit(binding: Binding, cell: HostCell, message: Extract<RuntimeEventMessage, { t: 'commit' }>): void {
    if (!this.core.settings.engine.storedValues) return;
    const { account } = cell;
    if (account.failure !== undefined || account.committed) return;
    let bytes = 0;
    for (const pair of message.writes) bytes += pairBytes(pair);
    const { limits } = this.core;
    if (binding.stagedBytes + bytes > limits.maxStoredBytes) {
      return this.failCell(cell, `exec stored values budget exceeded: the cell's writes in flight passed ${limits.maxStoredBytes} bytes (maxStoredBytes); none of its writes were stored, earlier values are unchanged`);
    }
    for (const pair of message.writes) account.staged.push(pair);
    account.stagedBytes += bytes;
    binding.stagedBytes += bytes;
    if (message.more) return;
    const writes = account.staged;
    binding.stagedBytes -= account.stagedBytes;
    account.staged = [];
    account.stagedBytes = 0;
    const refused = this.core.stored.commit(writes);
    if (refused !== undefined) return this.failCell(cell, refused);
    // Once: a replay of the cell commits nothing again (a runtime that tries is ignored).
    account.committed = true;
    cell.journal?.commit(writes);
  }
}
