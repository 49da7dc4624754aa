import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { SessionPool } from '@switchyard/kit/internal';
import { ApplyPatchError } from './apply-patch-error';
import { FrameReader } from './helper-frames';
import { HelperRun, answerFrameLimit, spawnHelper, stopHelper, watchHelper, writeFrame, type HelperApplyOptions, type HelperCommand } from './run-helper';
import { FROM_HELPER, type HelperToHost } from './helper-messages';
import type { VerifiedAnswer } from './helper-protocol';

/** How to start a helper: its (possibly sandboxed) command, and how long it may sit idle before it exits. */
export interface HelperLaunch {
  command: HelperCommand;
  /** Milliseconds without a patch after which the helper exits (the next patch starts a new one). */
  idleMs: number;
}

/** Milliseconds {@link LiveHelper.close} waits for a helper to finish a commit in progress before killing it. */
const CLOSE_GRACE_MS = 10_000;

/** Helper processes started by this process so far: each one's instance number. */
let started = 0;

type Refable = { ref?: () => void; unref?: () => void };

/**
 * Keeps the host's event loop waiting for the helper only while a patch is in flight: an idle
 * helper never holds a host process open that has nothing else to do.
 */
function holdLoop(child: ChildProcessWithoutNullStreams, hold: boolean): void {
  for (const handle of [child, child.stdin, child.stdout, child.stderr] as Refable[]) {
    if (hold) handle.ref?.();
    else handle.unref?.();
  }
}

/**
 * One long-lived helper process: started by the first patch, then sent every later patch as a
 * message (one at a time, in call order), restarted by the next patch when it died, was stopped
 * (a failure, a timeout, an abort while it verified) or sat idle for `idleMs`. A helper is never
 * trusted more than a fresh one: it gets the same sandbox, each answer is checked the same way,
 * and any misstep stops it.
 */
export class LiveHelper {
  private child: ChildProcessWithoutNullStreams | undefined;
  private reader: FrameReader<HelperToHost> | undefined;
  private current: HelperRun | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private idleMs = 0;
  private closed = false;
  /** The running helper's instance number (see `HelperApplyOptions.turn`). */
  private instance = 0;

  /** @param launch how to start the helper (may throw: the patch is refused with its error). */
  constructor(private readonly launch: () => Promise<HelperLaunch>) {}

  /** The running helper's pid, if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Verifies and applies `patch` in the helper (see `applyPatchInHelper`: the same answers). */
  apply(patch: string, options: HelperApplyOptions): Promise<VerifiedAnswer> {
    const result = this.queue.then(() => this.runOne(patch, options));
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async runOne(patch: string, options: HelperApplyOptions): Promise<VerifiedAnswer> {
    if (options.signal?.aborted) throw new ApplyPatchError('ABORTED', 'apply_patch was aborted before any file was written');
    if (this.closed) throw new ApplyPatchError('HELPER_FAILED', 'apply_patch helper was closed with its session; no file was changed');
    clearTimeout(this.idleTimer);
    const reused = this.child !== undefined;
    const { run, answer } = await this.send(patch, options);
    // A waiting helper that died (killed, out of memory) before Node noticed: the patch never
    // reached a live helper, so it goes once more, to a new one.
    return answer.catch((error: unknown) => {
      if (!reused || !run.exitedBeforeAnswer || this.closed) throw error;
      return this.send(patch, options).then((retry) => retry.answer);
    });
  }

  /** Starts one run on the running (or a new) helper. */
  private async send(patch: string, options: HelperApplyOptions): Promise<{ run: HelperRun; answer: Promise<VerifiedAnswer> }> {
    const child = await this.ensure();
    (this.reader as FrameReader<HelperToHost>).maxFrameBytes = answerFrameLimit(patch, options.limits);
    holdLoop(child, true);
    let run!: HelperRun;
    const answer = new Promise<VerifiedAnswer>((resolve, reject) => {
      run = new HelperRun({
        options,
        resolve,
        reject,
        channel: {
          send: (header, blobs) => writeFrame(child, header, blobs),
          done: (reusable) => this.finished(child, reusable),
        },
      });
      this.current = run;
      run.start(patch, this.instance);
    });
    return { run, answer };
  }

  /** A run ended: a usable helper waits (idle clock running, loop released); any other is stopped. */
  private finished(child: ChildProcessWithoutNullStreams, reusable: boolean): void {
    this.current = undefined;
    if (!reusable || this.child !== child) {
      this.forget(child);
      stopHelper(child);
      return;
    }
    holdLoop(child, false);
    this.idleTimer = setTimeout(() => this.retire(child), this.idleMs);
    this.idleTimer.unref();
  }

  /** The running helper, or a new one. */
  private async ensure(): Promise<ChildProcessWithoutNullStreams> {
    const running = this.child;
    if (running && !running.killed && running.exitCode === null && running.signalCode === null) return running;
    if (running) this.forget(running);
    const { command, idleMs } = await this.launch();
    const child = spawnHelper(command);
    const reader = new FrameReader(FROM_HELPER, 0);
    // Events of a helper already replaced (killed, exiting late) reach no run.
    watchHelper(child, reader, () => (this.child === child ? this.current : undefined));
    child.once('exit', () => this.forget(child));
    this.child = child;
    this.reader = reader;
    this.idleMs = idleMs;
    this.instance = ++started;
    return child;
  }

  private forget(child: ChildProcessWithoutNullStreams): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.reader = undefined;
  }

  /** Lets an idle helper exit (its stdin closes; it leaves once any commit is done). */
  private retire(child: ChildProcessWithoutNullStreams): void {
    if (this.child !== child || this.current) return;
    this.forget(child);
    child.stdin.end();
  }

  /**
   * Ends the helper for good (its session ended): stdin closes, so the helper leaves once a commit
   * in progress is done (killed after {@link CLOSE_GRACE_MS}); resolves once it is gone and its
   * sandbox released. Later patches are refused.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    const child = this.child;
    if (!child) return;
    this.forget(child);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('close', () => resolve()));
    holdLoop(child, true);
    child.stdin.end();
    const timer = setTimeout(() => stopHelper(child), CLOSE_GRACE_MS);
    await gone;
    clearTimeout(timer);
  }
}

/**
 * The helpers of one `applyPatchTool`: one per session and launch key (the workspace and the
 * sandbox policy), so two sessions never share a helper and one session's patches under another
 * policy get their own. `dispose(sessionId)` ends a session's helpers.
 */
export class HelperPool {
  private readonly pool = new SessionPool<LiveHelper>();

  /** The helper of `sessionId` for `key`, created (not yet started) on first use. */
  helperFor(sessionId: string, key: string, launch: () => Promise<HelperLaunch>): LiveHelper {
    return this.pool.get(sessionId, key, () => new LiveHelper(launch));
  }

  /** Ends the helpers of `sessionId` (every helper without one) and waits until they are gone. */
  dispose(sessionId?: string): Promise<void> {
    return this.pool.close(sessionId);
  }
}
