import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Options, transform as Transform } from 'sucrase';
import { CELL_FILENAME } from './cell-names';

/** Sucrase's settings: types only, line numbers preserved, imports kept so the import check still sees them. */
const STRIP_OPTIONS: Options = { transforms: ['typescript'], disableESTransforms: true, keepUnusedImports: true, filePath: CELL_FILENAME };

const requireHere = createRequire(import.meta.url);
let transform: typeof Transform | undefined;

/** Strips TypeScript types with sucrase on the calling thread. Throws sucrase's SyntaxError on input it cannot parse. */
export function stripTypes(source: string): string {
  // Loaded on first use: a worker process starts without it (its strips run on a helper thread).
  transform ??= (requireHere('sucrase') as { transform: typeof Transform }).transform;
  return transform(source, STRIP_OPTIONS).code;
}

/** The outcome of a bounded strip: the code, sucrase's error message, or the limit it hit. */
export type StripOutcome = { code: string } | { error: string } | { limit: 'time' | 'heap' };

/** The helper thread: sucrase's `transform`, one message per source. */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { transform } = require(workerData.sucrase);
parentPort.on('message', (job) => {
  let reply;
  try { reply = { id: job.id, code: transform(job.source, workerData.options).code }; }
  catch (error) { reply = { id: job.id, error: String((error && error.message) || error) }; }
  parentPort.postMessage(reply);
});`;

/** An idle helper thread ends after this long (ms). */
const THREAD_IDLE_MS = 10_000;

interface Helper {
  thread: Worker;
  heapMb: number;
  idleTimer?: NodeJS.Timeout;
}

const idle: Helper[] = [];
let sequence = 0;
let sucrasePath: string | undefined;

/**
 * Strips types on a helper thread (a `worker_threads` Worker), never on the engine's own thread:
 * sucrase can take exponential time on some inputs (26 nested arrow-function defaults take
 * minutes), and a thread that is stuck in it can be terminated. The strip is bounded by `timeMs`
 * (the cell's CPU budget, counted as wall time) and `heapMb` (the thread's old-generation limit);
 * `signal` stops it when its cell ends. A thread that hit a bound is terminated; idle threads are
 * reused and end after 10 s.
 */
export function stripTypesBounded(source: string, bounds: { timeMs: number; heapMb: number; signal?: AbortSignal }): Promise<StripOutcome> {
  return new Promise<StripOutcome>((resolve) => {
    if (bounds.signal?.aborted) return resolve({ limit: 'time' });
    const index = idle.findIndex((helper) => helper.heapMb === bounds.heapMb);
    const helper = index >= 0 ? idle.splice(index, 1)[0] : startHelper(bounds.heapMb);
    if (helper.idleTimer) clearTimeout(helper.idleTimer);
    helper.thread.ref();
    const id = ++sequence;
    let settled = false;
    const finish = (outcome: StripOutcome, reusable: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      bounds.signal?.removeEventListener('abort', onAbort);
      helper.thread.off('message', onMessage);
      helper.thread.off('error', onError);
      helper.thread.off('exit', onExit);
      if (reusable) park(helper);
      else void helper.thread.terminate();
      resolve(outcome);
    };
    const onMessage = (reply: { id: number; code?: string; error?: string }) => {
      if (reply.id !== id) return;
      finish(typeof reply.code === 'string' ? { code: reply.code } : { error: reply.error ?? 'TypeScript could not be stripped' }, true);
    };
    // ERR_WORKER_OUT_OF_MEMORY: the thread hit its heap limit (and is gone).
    const onError = (error: Error & { code?: string }) => finish(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? { limit: 'heap' } : { error: error.message }, false);
    const onExit = () => finish({ error: 'the TypeScript stripper stopped' }, false);
    const onAbort = () => finish({ limit: 'time' }, false);
    const timer = setTimeout(() => finish({ limit: 'time' }, false), bounds.timeMs);
    helper.thread.on('message', onMessage);
    helper.thread.on('error', onError);
    helper.thread.on('exit', onExit);
    bounds.signal?.addEventListener('abort', onAbort, { once: true });
    helper.thread.postMessage({ id, source });
  });
}

function startHelper(heapMb: number): Helper {
  sucrasePath ??= requireHere.resolve('sucrase');
  const thread = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { sucrase: sucrasePath, options: STRIP_OPTIONS },
    resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.max(4, Math.floor(heapMb / 8)) },
    stdout: true,
    stderr: true,
  });
  return { thread, heapMb };
}

function park(helper: Helper): void {
  helper.thread.unref();
  helper.idleTimer = setTimeout(() => {
    const index = idle.indexOf(helper);
    if (index >= 0) idle.splice(index, 1);
    void helper.thread.terminate();
  }, THREAD_IDLE_MS);
  helper.idleTimer.unref();
  idle.push(helper);
}
