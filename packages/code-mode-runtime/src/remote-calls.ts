import type { JournalCallResult } from '@switchyard/protocol';
import { notJsonResultText } from '@switchyard/kit/internal';
import { BacklogError, ProtocolError } from './protocol';
import { resultUnits } from './turn-queue';
import { callToolRequest } from './tool-request';
import { failureText } from './journal/call-outcome';
import { divergence, divergenceReason } from './cell-replay';
import type { RuntimeEventMessage } from './runtime-client';
import type { Binding, HostCell, RemoteCore } from './remote-binding';

type CallMessage = Extract<RuntimeEventMessage, { t: 'call' }>;

/** A result as the JSON text the host gave (`undefined`: no value), sent as it is. */
class JsonText {
  constructor(readonly text: string | undefined) {}
}

/** How a tool settled: its value (or the JSON text the host held), or the failure text. */
type Outcome = { ok: true; value: unknown } | { ok: false; error: string };

/** A nested call the host runs for a cell, whichever runtime waits for it now. */
export interface RunningCall {
  readonly cell: HostCell;
  readonly id: string;
  readonly tool: string;
  readonly controller: AbortController;
  /** The runtimes waiting for it: binding → the call's number there. */
  readonly waiters: Map<Binding, number>;
  outcome?: Outcome;
  /** What was sent to the cell (and journaled), once decided. */
  sent?: JournalCallResult;
}

/**
 * The agent host's side of nested calls: each `call` a runtime sends is run through the host's
 * tools once, ever. The journal is the guard (the runtime is untrusted, and a replayed cell asks
 * again): a call the cell's journal already holds is never run again — a settled one is answered
 * from the journal, one still running (the agent host outlived the runtime that asked first) is
 * joined and its result goes to the new runtime once, and a call whose tool or arguments differ
 * from its entry fails the cell (`cannot resume cell …`). A new call is journaled, written ahead
 * (`CellHost.journal`), then run. Tools keep running across a lost runtime while their cell is
 * being resumed.
 */
export class CallProxy {
  private readonly running = new Map<string, RunningCall>();

  constructor(
    private readonly core: RemoteCore,
    private readonly failCell: (cell: HostCell, message: string) => void,
  ) {}

  onCall(binding: Binding, message: CallMessage): void {
    const { client } = binding.lease;
    const cell = this.core.cells.get(message.cellId);
    if (!cell || cell.binding !== binding) return this.refuse(binding, message.call, `exec cell ${message.cellId} not found`);
    if (binding.calls.has(message.call)) return client.lose(`protocol violation: call ${message.call} is already in flight`);
    // A runtime numbers its calls upward on a connection, so a number at or below the highest seen
    // is a replayed frame: refused, or the tool would run a second time after its first call ended.
    if (message.call <= binding.lastCall) return client.lose(`protocol violation: call ${message.call} repeats an earlier call`);
    binding.lastCall = message.call;
    const { limits } = this.core;
    const inputJson = message.inputJson ?? (message.input === undefined ? undefined : JSON.stringify(message.input));
    const journal = cell.journal;
    const journaled = journal?.call(message.runtimeToolCallId);
    if (journaled) return this.again(cell, binding, message, inputJson);
    if (cell.account.calls >= limits.maxInFlightCalls) {
      const text = `exec nested call limit exceeded: the cell has ${cell.account.calls} nested calls in flight, the limit is ${limits.maxInFlightCalls} (maxInFlightCalls)`;
      if (journal) {
        journal.issue(message.runtimeToolCallId, message.tool, inputJson);
        journal.settle(message.runtimeToolCallId, { ok: false, error: text });
      }
      return this.refuse(binding, message.call, text);
    }
    const running = this.track(cell, binding, message);
    const written = journal?.issue(message.runtimeToolCallId, message.tool, inputJson).written;
    // Started even when the runtime already aborted it (the host sees the call and its aborted signal).
    binding.work.push(() => {
      if (written === undefined) return this.start(running, message);
      written.then(
        () => this.start(running, message),
        (error: unknown) => this.settle(running, { ok: false, error: `tool \`${message.tool}\` was not called: its journal entry could not be written (${failureText(error)})` }),
      );
    });
  }

  /** The runtime no longer waits for call `number`: stop the tool (it still gets its one answer). */
  onAbort(binding: Binding, number: number): void {
    binding.calls.get(number)?.controller.abort('nested tool call cancelled');
  }

  /**
   * The runtime behind `binding` is gone: its calls are answered to nobody. A call of a cell being
   * resumed runs on (the replay joins it); any other is aborted.
   */
  release(binding: Binding, abort: (cell: HostCell) => boolean): void {
    for (const [number, running] of binding.calls) {
      binding.calls.delete(number);
      running.waiters.delete(binding);
      running.cell.account.calls = Math.max(0, running.cell.account.calls - 1);
      if (abort(running.cell) && running.waiters.size === 0) running.controller.abort('exec cell ended');
    }
  }

  /**
   * The cell left the session (ended, terminated, failed): a call of it that nobody waits for any
   * more (its runtime was lost and no replay joined it yet) would run on for nobody, so it is aborted.
   */
  endCell(cell: HostCell): void {
    for (const [key, running] of this.running) {
      if (running.cell !== cell || running.waiters.size > 0) continue;
      this.running.delete(key);
      running.controller.abort('exec cell ended');
    }
  }

  /** A call the cell's journal already has (a replay, or a runtime asking twice): answered, joined, or refused. */
  private again(cell: HostCell, binding: Binding, message: CallMessage, inputJson: string | undefined): void {
    const journal = cell.journal!;
    const id = message.runtimeToolCallId;
    const journaled = journal.call(id)!;
    if (!journal.matches(id, message.tool, inputJson)) {
      const text = divergence(cell.id, divergenceReason(id, message.tool, journaled.tool));
      this.failCell(cell, text);
      return this.refuse(binding, message.call, text);
    }
    if (journaled.result) {
      const result = journaled.result;
      return binding.work.push(() => this.post(binding, message.call, result), resultUnits(result.ok ? result.json : result.error));
    }
    const running = this.running.get(`${cell.id}\u0000${id}`);
    if (running) {
      running.waiters.set(binding, message.call);
      binding.calls.set(message.call, running);
      cell.account.calls++;
      if (running.outcome) this.deliverTo(running, binding, message.call);
      return;
    }
    if (journaled.settled) return this.refuse(binding, message.call, `tool \`${message.tool}\` was not called again: its call ${id} was answered before`);
    // Open in a restored journal (the host was asked to run it again): run it, journaled already.
    binding.work.push(() => this.start(this.track(cell, binding, message), message));
  }

  private track(cell: HostCell, binding: Binding, message: CallMessage): RunningCall {
    const running: RunningCall = { cell, id: message.runtimeToolCallId, tool: message.tool, controller: new AbortController(), waiters: new Map([[binding, message.call]]) };
    this.running.set(`${cell.id}\u0000${running.id}`, running);
    binding.calls.set(message.call, running);
    cell.account.calls++;
    return running;
  }

  /** Starts the host's tool: its result's JSON text when the host holds it (`invokeToolJson`), else the value (encoded when sent). */
  private start(running: RunningCall, message: CallMessage): void {
    const { host } = this.core.settings;
    let result: Promise<unknown>;
    try {
      const request = callToolRequest(message, running.controller.signal);
      result = host.invokeToolJson
        ? host.invokeToolJson(request).then((answer) => ('json' in answer ? new JsonText(answer.json) : answer.value))
        : Promise.resolve(host.invokeTool(request));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => this.settle(running, { ok: true, value }),
      (error: unknown) => this.settle(running, { ok: false, error: failureText(error) }),
    );
  }

  private settle(running: RunningCall, outcome: Outcome): void {
    running.outcome = outcome;
    // Nobody waits (its runtime was lost, its replay not there yet): the journal keeps it for the replay.
    if (running.waiters.size === 0) return this.journal(running, this.encode(running, undefined));
    for (const [binding, number] of running.waiters) this.deliverTo(running, binding, number);
  }

  private deliverTo(running: RunningCall, binding: Binding, number: number): void {
    const outcome = running.outcome!;
    const units = outcome.ok ? resultUnits(outcome.value instanceof JsonText ? outcome.value.text : outcome.value) : 1;
    binding.work.push(() => {
      if (binding.calls.get(number) === running) {
        binding.calls.delete(number);
        running.cell.account.calls = Math.max(0, running.cell.account.calls - 1);
      }
      running.waiters.delete(binding);
      if (binding.lease.client.ended) return;
      const sent = this.encode(running, binding);
      this.post(binding, number, sent);
      this.journal(running, sent);
    }, units);
  }

  /**
   * What goes to the cell: the failure, or the result's JSON text (the host's one encode of a
   * value), or why it could not be sent (the backlog of `binding`, a value JSON cannot encode).
   * A string certain to pass the backlog limit is refused before it is encoded.
   */
  private encode(running: RunningCall, binding: Binding | undefined): JournalCallResult {
    if (running.sent) return running.sent;
    const outcome = running.outcome!;
    if (!outcome.ok) return (running.sent = { ok: false, error: outcome.error });
    const value = outcome.value;
    try {
      const limit = this.core.limits.maxInFlightResultBytes;
      const atLeast = value instanceof JsonText ? (value.text?.length ?? 0) : typeof value === 'string' ? value.length + 2 : 0;
      const backlog = binding?.lease.client.backlogBytes ?? 0;
      if (backlog + atLeast > limit) throw new BacklogError(atLeast, backlog, limit);
      const json = value instanceof JsonText ? value.text : JSON.stringify(value);
      return (running.sent = json === undefined ? { ok: true } : { ok: true, json });
    } catch (error) {
      return (running.sent = { ok: false, error: unsendable(error) });
    }
  }

  private journal(running: RunningCall, sent: JournalCallResult): void {
    running.cell.journal?.settle(running.id, sent);
    const key = `${running.cell.id}\u0000${running.id}`;
    if (this.running.get(key) === running && running.waiters.size === 0) this.running.delete(key);
  }

  /** Sends one answer; a result the frame or the backlog cannot take goes as the failure saying why. */
  private post(binding: Binding, number: number, result: JournalCallResult): void {
    const { client } = binding.lease;
    if (client.ended) return;
    if (!result.ok) return this.refuse(binding, number, result.error);
    try {
      client.post(result.json === undefined ? { t: 'call-result', call: number, ok: true } : { t: 'call-result', call: number, ok: true, json: result.json }, this.core.limits.maxInFlightResultBytes);
    } catch (error) {
      this.refuse(binding, number, unsendable(error));
    }
  }

  /** Answers call `number` with a failure text (shortened when even that is too long to send). */
  private refuse(binding: Binding, number: number, text: string): void {
    const { client } = binding.lease;
    if (client.ended) return;
    try {
      client.post({ t: 'call-result', call: number, ok: false, error: text });
    } catch {
      client.post({ t: 'call-result', call: number, ok: false, error: `${text.slice(0, 1_000)}… (the tool's error text was too long to send to the cell)` });
    }
  }
}

/** Why a tool's result could not go to the cell (a frame or backlog limit, or a value JSON cannot encode). */
function unsendable(error: unknown): string {
  if (error instanceof BacklogError) {
    return `tool result could not be sent to the cell: ${error.bytes} bytes would put ${error.backlog + error.bytes} bytes of results in flight to the runtime, over the limit of ${error.limit} bytes (maxInFlightResultBytes)`;
  }
  if (error instanceof ProtocolError) return `tool result could not be sent to the cell: ${error.message}`;
  return notJsonResultText(error);
}
