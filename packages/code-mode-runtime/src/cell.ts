import type ivm from 'isolated-vm';
import { loadIsolatedVm } from './isolated-vm';
import {
  type ContentItem,
  SwitchyardError,
  errorMessage,
  type CellHost,
  type CellObservation,
  type CellToolDescriptor,
} from '@switchyard/protocol';
import { codeModeDeclaration } from '@switchyard/kit/internal';
import { CELL_PRELUDE } from './cell-prelude';
import { decodeCellMessage } from './cell-bridge';
import type { ControlFunction, ControlMessage, PreludeConfig, PreludeLimits } from './prelude/bridge';
import type { EngineSessionOptions } from './protocol';
import { compileCellModule } from './cell-source';
import { watchCpu } from './cpu-watch';
import { stripTypesBounded } from './type-stripper';
import { nullPrototype } from './null-prototype';
import { maxValueChars, valueTooLarge } from './value-limit';
import { PRELUDE_LIMITS, limitOf, type RuntimeHeldLimit } from './cell-limits';
import { cellToolRequest } from './tool-request';
import { CellReplay, divergence, type ReplayJournal } from './cell-replay';
import { runOnHost } from './journal/call-outcome';
import type { JournalCallResult } from '@switchyard/protocol';

/**
 * Per-cell resource limits: those of `CELL_LIMITS` a runtime holds, but `maxCells` (the session's).
 * `maxStoredBytes` bounds the cell's own stored writes (absent: its default for the heap): the
 * `store()` that passes it throws and the cell fails with none of its writes stored.
 */
export type CellLimits = Pick<EngineSessionOptions, Exclude<RuntimeHeldLimit, 'maxCells'>>;

/** Node fires a delay above 2^31 − 1 ms after 1 ms (with a TimeoutOverflowWarning); longer delays are clamped to it. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** How long terminate waits for cancelled nested calls to settle before it answers. */
const CANCEL_GRACE_MS = 100;
/** The time a TypeScript strip may take when the cell has neither a CPU nor a wall limit (ms). */
const STRIP_FALLBACK_MS = 60_000;

export type CellState = 'running' | 'completed' | 'terminating' | 'closed';

interface Observer {
  resolve(observation: CellObservation): void;
  startedAt: number;
  timer?: NodeJS.Timeout;
  /** Removes the abort listener of the observation's signal. */
  unlisten?: () => void;
}

/** The rejection of a cancelled observation (a dropped observer). */
export const observationCancelled = (cellId: string) => new SwitchyardError('ABORTED', `observation of exec cell ${cellId} was cancelled`);

interface PendingCall {
  controller: AbortController;
  settled: Promise<void>;
}

export interface CellOptions {
  id: string;
  host: CellHost;
  limits: CellLimits;
  storedSnapshot: Array<[string, string]>;
  storedValues: boolean;
  /** Merges the cell's stored writes into the session; called atomically with the transition to completed. */
  commit(writes: Array<[string, string]>): void;
  /** Called once when the cell leaves its session. */
  closed(cell: Cell): void;
  /** The seed of the cell's `Math.random` (32 hex digits). */
  seed: string;
  /** Journal entries as the cell reports them, in order, before the message they came with is handled. */
  journal?(entries: string): void;
  /** Re-run the cell from this journal (throws `INVALID_JOURNAL` from the constructor when it cannot be read). */
  replay?: ReplayJournal;
}

const elapsed = (startedAt: number) => performance.now() - startedAt;

/**
 * One cell: an isolate running the module off the host thread (async isolated-vm entries on its
 * thread pool), the host end of the message bridge, and the observation state machine
 * (running → completed → closed, or running → terminating → closed).
 */
export class Cell {
  readonly id: string;
  state: CellState = 'running';
  private readonly options: CellOptions;
  private buffer: ContentItem[] = [];
  private observer: Observer | undefined;
  private completion: { error?: string } | undefined;
  /** Stored writes announced by the cell's `write` messages, committed by a matching `done`. */
  private writes: Array<[string, string]> = [];
  private readonly pendingCalls = new Map<string, PendingCall>();
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private dueTimers: number[] = [];
  private isolate: ivm.Isolate | undefined;
  private control: ivm.Reference<ControlFunction> | undefined;
  private killedByHost = false;
  private wallTimer: NodeJS.Timeout | undefined;
  private stopCpuWatch: (() => void) | undefined;
  /** Aborted when the cell ends: stops a TypeScript strip in progress. */
  private readonly ended = new AbortController();
  private termination: Promise<void> | undefined;
  /** Set while the cell is re-run from its journal (and kept once live, for the journaled calls). */
  private readonly replay: CellReplay | undefined;

  /** Throws `INVALID_JOURNAL` when `options.replay` cannot be read. */
  constructor(options: CellOptions) {
    this.options = options;
    this.id = options.id;
    this.replay = options.replay ? new CellReplay(options.id, options.replay, this.replayPort()) : undefined;
  }

  /** Creates the isolate, installs the globals, compiles and starts the module. Never throws. */
  async start(source: string, tools: readonly CellToolDescriptor[], typescript: boolean | undefined): Promise<void> {
    const { limits } = this.options;
    try {
      if (limits.wallTimeMs !== undefined) {
        this.wallTimer = setTimeout(() => this.kill(`exec cell exceeded its wall time limit of ${limits.wallTimeMs} ms`), limits.wallTimeMs);
      }
      const ivm = await loadIsolatedVm();
      if (this.state !== 'running') return;
      const isolate = new ivm.Isolate(nullPrototype({ memoryLimit: limits.heapMb }));
      this.isolate = isolate;
      if (this.state !== 'running') return this.dispose();
      const context = await isolate.createContext();
      if (this.state !== 'running') return this.dispose();
      const preludeConfig: PreludeConfig = {
        tools: tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          kind: tool.kind,
          declaration: tool.declaration ?? codeModeDeclaration({ codeModeName: tool.name, kind: tool.kind, description: tool.description }),
        })),
        storeEnabled: this.options.storedValues,
        seed: this.options.seed,
        ...(this.replay ? { replayTimes: this.replay.times } : {}),
        limits: preludeLimits(limits),
      };
      const config = JSON.stringify(preludeConfig);
      // Copied as one string per value: a single string holding all stored values would be one
      // allocation of their total size inside the isolate (see value-limit.ts).
      const stored = new ivm.ExternalCopy(this.options.storedSnapshot).copyInto(nullPrototype({ release: true as const }));
      const post = new ivm.Callback(
        (kind: unknown, a: unknown, b: unknown, c: unknown, journal: unknown) => this.onMessage(kind, a, b, c, journal),
        nullPrototype({ ignored: true as const }),
      );
      // Synchronous: the cell's thread waits until the host has run every message queued before (backpressure).
      const flow = new ivm.Callback(() => undefined, nullPrototype({ sync: true as const }));
      this.control = (await context.evalClosure(CELL_PRELUDE, [post, config, stored, flow], nullPrototype({ result: nullPrototype({ reference: true as const }) }))) as never;
      if (this.state !== 'running') return this.dispose();
      const strip = (code: string) =>
        stripTypesBounded(code, { timeMs: limits.cpuTimeMs ?? limits.wallTimeMs ?? STRIP_FALLBACK_MS, heapMb: limits.heapMb, signal: this.ended.signal });
      const compiled = await compileCellModule(isolate, source, typescript, strip);
      if (this.state !== 'running') return this.dispose();
      if ('limit' in compiled) {
        return this.kill(
          compiled.limit === 'heap'
            ? `exec runtime ended unexpectedly: the cell exceeded its heap limit of ${limits.heapMb} MB while stripping TypeScript types`
            : limits.cpuTimeMs !== undefined
              ? `exec cell exceeded its CPU time limit of ${limits.cpuTimeMs} ms while stripping TypeScript types`
              : `exec cell exceeded its time limit of ${limits.wallTimeMs ?? STRIP_FALLBACK_MS} ms for stripping TypeScript types`,
        );
      }
      if ('error' in compiled) return this.complete(compiled.error, undefined);
      await compiled.module.instantiate(context, (specifier) => {
        throw new Error(`Unsupported import in exec: ${specifier}`);
      });
      if (this.state !== 'running') return this.dispose();
      const budgetNs = limits.cpuTimeMs === undefined ? undefined : BigInt(limits.cpuTimeMs) * 1_000_000n;
      this.stopCpuWatch = watchCpu(() => this.watch(budgetNs));
      compiled.module.evaluate(nullPrototype({})).then(
        () => compiled.module.release(),
        (error) => this.onEntryError(error),
      );
      this.replay?.begin();
    } catch (error) {
      if (this.state !== 'running') return;
      if (this.isolate?.isDisposed && !this.killedByHost) return this.runtimeLost(error);
      this.complete(`exec runtime failed to start: ${errorMessage(error)}`, undefined);
    }
  }

  /**
   * Attaches an observer. The caller checked state and the single-observer rule.
   * An aborted `signal` detaches it without taking the buffer or closing the cell (a dropped
   * observer loses nothing) and rejects with `ABORTED`.
   */
  observe(yieldTimeMs: number, startedAt: number, signal?: AbortSignal): Promise<CellObservation> {
    if (signal?.aborted) return Promise.reject(observationCancelled(this.id));
    if (this.state === 'completed') {
      const observation = this.completedObservation(startedAt);
      this.close();
      return Promise.resolve(observation);
    }
    if (this.state === 'terminating') {
      return (this.termination ?? Promise.resolve()).then(() => ({ kind: 'terminated', cellId: this.id, items: [], wallTimeMs: elapsed(startedAt) }));
    }
    return new Promise((resolve, reject) => {
      const observer: Observer = { resolve, startedAt };
      observer.timer = setTimeout(() => this.yieldNow(), Math.min(MAX_TIMER_DELAY_MS, Math.max(0, yieldTimeMs)));
      if (signal) {
        const onAbort = () => {
          if (this.observer !== observer) return;
          this.detachObserver();
          reject(observationCancelled(this.id));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        observer.unlisten = () => signal.removeEventListener('abort', onAbort);
      }
      this.observer = observer;
    });
  }

  hasObserver(): boolean {
    return this.observer !== undefined;
  }

  /**
   * Terminates: a committed completion wins; otherwise the isolate is disposed,
   * nested calls are aborted (awaited up to a 100 ms grace) and the unobserved output returned.
   */
  async terminate(startedAt: number): Promise<CellObservation> {
    if (this.state === 'completed') {
      const observation = this.completedObservation(startedAt);
      this.close();
      return observation;
    }
    this.state = 'terminating';
    const items = this.takeBuffer();
    const prior = this.detachObserver();
    const settled = this.teardown();
    let finish!: () => void;
    this.termination = new Promise<void>((resolve) => (finish = resolve));
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, CANCEL_GRACE_MS).unref())]);
    this.close();
    finish();
    prior?.resolve({ kind: 'terminated', cellId: this.id, items: [], wallTimeMs: elapsed(prior.startedAt) });
    return { kind: 'terminated', cellId: this.id, items, wallTimeMs: elapsed(startedAt) };
  }

  /** Session shutdown: stop whatever runs, answer an attached observer with `terminated`. */
  async shutdown(): Promise<void> {
    if (this.state === 'closed') return;
    if (this.state === 'terminating') return this.termination;
    if (this.state === 'completed') return this.close();
    const observer = this.observer;
    const startedAt = observer?.startedAt ?? performance.now();
    const observation = await this.terminate(startedAt);
    observer?.resolve(observation);
  }

  // ---- isolate → host ------------------------------------------------------------------
  private onMessage(kind: unknown, a: unknown, b: unknown, c: unknown, journal: unknown): void {
    if (this.state !== 'running') return;
    try {
      // The entries recorded before the message reach the host before anything the message causes.
      if (typeof journal === 'string' && journal !== '') this.options.journal?.(journal);
      this.handleMessage(kind, a, b, c);
    } catch {
      // Messages come from untrusted code: a malformed one is dropped, never thrown into the host.
    }
  }

  private handleMessage(kind: unknown, a: unknown, b: unknown, c: unknown): void {
    const message = decodeCellMessage(kind, a, b, c);
    if (message === undefined) return;
    switch (message[0]) {
      case 'text':
      case 'image': {
        const item: ContentItem = message[0] === 'text' ? { type: 'input_text', text: message[1] } : { type: 'input_image', image_url: message[1], detail: message[2] };
        if (!this.replay || this.replay.keepItem(item)) this.buffer.push(item);
        return;
      }
      case 'notify':
        if (this.replay && !this.replay.keepNotify(message[1])) return;
        try {
          this.options.host.notify({ cellId: this.id, text: message[1] });
        } catch {
          // a broken host never fails the cell
        }
        return;
      case 'yield':
        // A replay's yields were answered before (or their output is still to come): only live ones count.
        if (this.observer && (!this.replay || this.replay.isLive)) this.yieldNow();
        return;
      case 'calls': {
        // [id, tool, inputJson, id, tool, inputJson, …]: the calls the cell started in one run
        const batch = message[1];
        for (let i = 0; i + 2 < batch.length && this.state === 'running'; i += 3) {
          const [id, tool, input] = [batch[i], batch[i + 1], batch[i + 2]];
          if (this.pendingCalls.has(id)) continue;
          const route = this.replay ? this.replay.call(id, tool, input) : 'host';
          if (route === 'host') this.onCall(id, tool, input);
        }
        return;
      }
      case 'set-timer':
        this.onSetTimer(message[1], message[2]);
        return;
      case 'clear-timer':
        clearTimeout(this.timers.get(message[1]));
        this.timers.delete(message[1]);
        this.replay?.clearTimer(message[1]);
        return;
      case 'write':
        this.writes.push([message[1], message[2]]);
        return;
      case 'done': {
        const diverged = this.replay?.ended();
        if (diverged !== undefined) return this.complete(divergence(this.id, diverged), undefined);
        // A count that does not match what arrived (or -1: the cell could not report) commits nothing;
        // a replayed cell whose writes were committed before commits nothing again.
        const writes = message[3] === this.writes.length && !this.replay?.committed ? this.writes : [];
        this.complete(message[1] === 1 ? message[2] : undefined, writes);
        return;
      }
      case 'synced':
        this.replay?.synced(message[1]);
        return;
    }
  }

  private onCall(runtimeToolCallId: string, tool: string, inputJson: string): void {
    const controller = new AbortController();
    // The arguments stay the cell's JSON text: the host parses them once (or relays the text on).
    const request = cellToolRequest({ cellId: this.id, runtimeToolCallId, tool, signal: controller.signal }, inputJson);
    // A replay enters what the host answers only once it is live (after the journaled deliveries).
    const enter = (ok: boolean, payload: string | undefined) =>
      this.replay ? this.replay.whenLive(() => this.resolveCall(runtimeToolCallId, tool, ok, payload)) : this.resolveCall(runtimeToolCallId, tool, ok, payload);
    const settled = runOnHost(this.options.host, request).then((result) => enter(result.ok, result.ok ? result.json : result.error));
    this.pendingCalls.set(runtimeToolCallId, { controller, settled });
  }

  /** Settles a call inside the cell: ok with the result's JSON text (the isolate's one parse), or failed with its text. */
  private resolveCall(runtimeToolCallId: string, tool: string, ok: boolean, payload: string | undefined, replayed: 0 | 1 = 0): void {
    this.pendingCalls.delete(runtimeToolCallId);
    if (this.state !== 'running') return;
    const { heapMb } = this.options.limits;
    const limit = maxValueChars(heapMb);
    if (ok) {
      // Parsing it inside the cell would allocate its strings whole (see value-limit.ts).
      if (payload !== undefined && payload.length > limit) {
        return this.enter('resolve', runtimeToolCallId, 0, valueTooLarge(`the JSON of the result of tool \`${tool}\``, payload.length, heapMb), replayed);
      }
      this.enter('resolve', runtimeToolCallId, 1, payload, replayed);
    } else {
      let text = payload ?? '';
      if (text.length > limit) text = `${text.slice(0, 1000)}… (${valueTooLarge("the tool's error text", text.length, heapMb)})`;
      this.enter('resolve', runtimeToolCallId, 0, text, replayed);
    }
  }

  /** How the replay drives the cell (see `CellReplay`). */
  private replayPort() {
    return {
      sync: (sequence: number) => this.enter('sync', sequence),
      deliverResult: (id: string, tool: string, result: JournalCallResult) =>
        result.ok ? this.resolveCall(id, tool, true, result.json, 1) : this.resolveCall(id, tool, false, result.error, 1),
      deliverTimers: (ids: readonly number[]) => this.enter('timers', JSON.stringify(ids), 1),
      live: () => {
        for (const [id, delay] of this.replay!.takeDeferredTimers()) this.startTimer(id, delay);
      },
      diverge: (reason: string) => this.complete(divergence(this.id, reason), undefined),
    };
  }

  private onSetTimer(id: number, delay: number): void {
    // The prelude enforces maxTimers with a clear error; this guards the host if it is bypassed.
    if (this.timers.size >= this.options.limits.maxTimers) return;
    delay = Number.isFinite(delay) ? Math.min(MAX_TIMER_DELAY_MS, Math.max(0, delay)) : 0;
    // In a replay, a timer the journal fires is fired from it, and one it does not waits for the end.
    if (this.replay && this.replay.setTimer(id, delay) !== 'start') return;
    this.startTimer(id, delay);
  }

  private startTimer(id: number, delay: number): void {
    if (this.state !== 'running') return;
    const timer = setTimeout(() => {
      this.timers.delete(id);
      // Timers due in the same host tick enter the isolate once, in order.
      if (this.dueTimers.length === 0) setImmediate(() => this.flushTimers());
      this.dueTimers.push(id);
    }, delay);
    this.timers.set(id, timer);
  }

  private flushTimers(): void {
    const ids = this.dueTimers;
    this.dueTimers = [];
    if (ids.length > 0) this.enter('timers', JSON.stringify(ids), 0);
  }

  /**
   * Enters the isolate asynchronously (isolated-vm thread pool); failures are inspected, never
   * thrown. A nested call's result enters with `applyIgnored`: no promise settles on this thread
   * when the entry ends, a wake-up that competed with the cell's next message on every sequential
   * nested call (in a worker at load 6, the resolve-to-next-call hop went from 59–67 to 44–46 µs,
   * p10). An isolate that runs out of heap in such an entry is then seen by {@link watch} (within
   * 10 ms) instead of through the entry's promise. Other entries (timers) keep their promise.
   */
  private enter(...message: ControlMessage): void {
    const control = this.control;
    if (!control || this.state !== 'running') return;
    if (message[0] === 'resolve') return control.applyIgnored(undefined, message as never);
    control.apply(undefined, message as never, nullPrototype({})).then(undefined, (error: unknown) => this.onEntryError(error));
  }

  /**
   * Every 10 ms while the cell runs: an isolate disposed but not by the host ran out of heap
   * (isolated-vm disposes an isolate only when asked or at its memory limit), and a CPU time over
   * `budgetNs` kills the cell.
   */
  private watch(budgetNs: bigint | undefined): void {
    const isolate = this.isolate;
    if (this.state !== 'running' || !isolate) return;
    if (isolate.isDisposed) {
      if (!this.killedByHost) this.runtimeLost(new Error('the isolate was disposed at its memory limit'));
      return;
    }
    if (budgetNs !== undefined && isolate.cpuTime > budgetNs) this.kill(`exec cell exceeded its CPU time limit of ${this.options.limits.cpuTimeMs} ms`);
  }

  /** An entry failed: a disposed isolate we did not kill is a lost runtime; anything else is an ignored unhandled rejection. */
  private onEntryError(error: unknown): void {
    if (this.state !== 'running') return;
    if (this.isolate?.isDisposed && !this.killedByHost) this.runtimeLost(error);
  }

  private runtimeLost(error: unknown): void {
    const message = errorMessage(error);
    if (/memory limit/i.test(message)) return this.kill(`exec runtime ended unexpectedly: the cell exceeded its heap limit of ${this.options.limits.heapMb} MB`);
    this.complete('exec runtime ended unexpectedly', undefined);
  }

  /** Fails the cell because a limit was hit: the isolate is disposed, stored writes are discarded, the host hears of it. */
  private kill(error: string): void {
    if (this.state !== 'running') return;
    this.complete(error, undefined);
    try {
      this.options.host.runtimeEvent?.({ type: 'cell-limit-exceeded', cellId: this.id, message: error });
    } catch {
      // a broken host never harms the runtime
    }
  }

  // ---- state transitions ---------------------------------------------------------------
  /** Completion: commit writes atomically with the transition, then tear down. */
  private complete(error: string | undefined, writes: Array<[string, string]> | undefined): void {
    if (this.state !== 'running') return;
    if (writes && writes.length > 0) this.options.commit(writes);
    this.state = 'completed';
    this.completion = error === undefined ? {} : { error };
    void this.teardown();
    const observer = this.detachObserver();
    if (observer) {
      observer.resolve(this.completedObservation(observer.startedAt));
      this.close();
    }
  }

  private completedObservation(startedAt: number): CellObservation {
    const observation: CellObservation = { kind: 'completed', cellId: this.id, items: this.takeBuffer(), wallTimeMs: elapsed(startedAt) };
    if (this.completion?.error !== undefined) observation.error = this.completion.error;
    return observation;
  }

  private yieldNow(): void {
    const observer = this.detachObserver();
    if (!observer) return;
    observer.resolve({ kind: 'yielded', cellId: this.id, items: this.takeBuffer(), wallTimeMs: elapsed(observer.startedAt) });
  }

  private detachObserver(): Observer | undefined {
    const observer = this.observer;
    this.observer = undefined;
    if (observer?.timer) clearTimeout(observer.timer);
    observer?.unlisten?.();
    return observer;
  }

  private takeBuffer(): ContentItem[] {
    const items = this.buffer;
    this.buffer = [];
    return items;
  }

  /** Stops everything the cell owns; resolves when the aborted nested calls have settled. */
  private teardown(): Promise<unknown> {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.dueTimers = [];
    if (this.wallTimer) clearTimeout(this.wallTimer);
    this.stopCpuWatch?.();
    this.ended.abort();
    this.dispose();
    const settled: Promise<void>[] = [];
    for (const call of this.pendingCalls.values()) {
      call.controller.abort();
      settled.push(call.settled);
    }
    this.pendingCalls.clear();
    return Promise.all(settled);
  }

  private dispose(): void {
    this.killedByHost = true;
    const isolate = this.isolate;
    if (isolate && !isolate.isDisposed) {
      try {
        isolate.dispose();
      } catch {
        // already gone
      }
    }
    this.control = undefined;
  }

  private close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.buffer = [];
    this.options.closed(this);
  }
}

/** The limits the prelude enforces (`PRELUDE_LIMITS`, an absent one at its default) and the value size limit. */
function preludeLimits(limits: CellLimits): PreludeLimits {
  const values = Object.fromEntries(PRELUDE_LIMITS.map((name) => [name, limitOf(limits, name)]));
  return { ...values, maxValueChars: maxValueChars(limits.heapMb) } as PreludeLimits;
}
