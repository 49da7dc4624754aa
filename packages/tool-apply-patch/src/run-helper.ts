import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ApplyPatchError, type ApplyPatchErrorCode } from './apply-patch-error';
import { FrameReader, encodeFrame, type Frame, type HelperFrameError } from './helper-frames';
import { FROM_HELPER, type HelperToHost, type HostToHelper } from './helper-messages';
import { decodeVerified, encodeSeed, type VerifiedAnswer } from './helper-protocol';
import { DEFAULT_PATCH_LIMITS, maxAnswerHeaderBytes, type PatchLimits } from './limits';
import type { ApplyPatchResult } from './verify-patch';

/** How to start a program: the file and its arguments. */
export interface HelperCommand {
  file: string;
  args: string[];
  /** The helper's environment. Default: the host's. */
  env?: Record<string, string>;
  /**
   * What the helper reads to start — the Node binary and the helper's own package (from source:
   * the repository checkout, which holds tsx) — for a sandbox to bind read-only: the Node of a
   * test matrix or an install may live under `/root`, `/home` or `/tmp`, which the sandbox hides.
   */
  reads?: string[];
  /** Called once the helper process is gone (or never started): a sandbox removes what it set up for it. */
  release?: () => void;
}

/** Options of {@link applyPatchInHelper}. */
export interface HelperApplyOptions {
  root: string;
  allowOutsideRoot?: boolean;
  protectedNames?: readonly string[];
  limits?: Partial<PatchLimits>;
  /** Aborting before the helper is told to commit refuses the patch (`ABORTED`); a commit in progress is never interrupted. */
  signal?: AbortSignal;
  /**
   * Wraps the helper's argv, e.g. in the exec sandbox (`bwrap … -- node helper.js`). Default:
   * run it as is. May throw (a sandbox that cannot be provided): the patch is refused with its error.
   */
  wrap?: (command: HelperCommand) => HelperCommand;
  /** Called once everything is verified and before anything is written (events, approvals). Return false to write nothing. */
  onVerified?: (result: ApplyPatchResult) => boolean | Promise<boolean>;
  /** V8 heap of the helper, in MiB. Default 2048. */
  heapMb?: number;
  /** Milliseconds the helper may run before it is killed. Default 120 000. */
  timeoutMs?: number;
  /**
   * The turn the patch belongs to, asked once the helper process is known (`instance`: a number
   * new for each process started): its token, and the baselines to seed a token the helper has
   * not seen with. The answer then carries `turnFiles`, not the files' texts.
   */
  turn?: (instance: number) => HelperTurnRequest;
}

/** A patch's turn, as the host names it to a helper (see {@link HelperApplyOptions.turn}). */
export interface HelperTurnRequest {
  token: string;
  seed?: ReadonlyMap<string, { text: Buffer | null } | { hash: string | null }>;
}

/**
 * The argv that runs the helper script with this Node binary (the TypeScript source via tsx when
 * not built), and what it reads. The built helper is one file with its dependencies bundled in,
 * so its package folder (for `"type": "module"`) and Node are all it needs.
 */
export function helperCommand(heapMb = 2048): HelperCommand {
  const { node, args, reads } = (helperLocation ??= locateHelper());
  return { file: node, args: [`--max-old-space-size=${heapMb}`, ...args], reads: [...reads] };
}

/** Where this process's helper is: found once per process (the paths are resolved synchronously, so not per session). */
let helperLocation: { node: string; args: readonly string[]; reads: readonly string[] } | undefined;

/** Synchronous: two `realpath`s and an `access` per parent folder, once per process (see {@link helperLocation}). */
function locateHelper(): { node: string; args: readonly string[]; reads: readonly string[] } {
  const here = currentModuleUrl();
  const node = realpathSync(process.execPath);
  const packageRoot = realpathSync(fileURLToPath(new URL('..', here)));
  if (here.endsWith('.ts')) {
    // Running from source (tests, development): the helper is TypeScript too.
    const tsx = createRequire(here).resolve('tsx');
    const script = fileURLToPath(new URL('./apply-patch-helper.ts', here));
    return { node, args: ['--import', pathToFileURL(tsx).href, '--conditions=@switchyard/source', script], reads: [node, checkoutRoot(packageRoot) ?? packageRoot] };
  }
  return { node, args: [fileURLToPath(new URL('./apply-patch-helper.js', here))], reads: [node, packageRoot] };
}

/** The pnpm workspace holding `folder` (where tsx and the sources' modules are installed), if any; synchronous, from {@link locateHelper} only. */
function checkoutRoot(folder: string): string | undefined {
  for (let dir = folder; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function currentModuleUrl(): string {
  return import.meta.url;
}

const MAX_STDERR = 64 * 1024;

/** The frame limit of a helper's answer to `patch`: contents and diffs as blobs, plus the header a patch of this size can need. */
export function answerFrameLimit(patch: string, limitsOption?: Partial<PatchLimits>): number {
  const limits = { ...DEFAULT_PATCH_LIMITS, ...limitsOption };
  return limits.maxTotalBytes * 4 + limits.maxPatchBytes + 16 * 1024 * 1024 + maxAnswerHeaderBytes(Buffer.byteLength(patch, 'utf8'), limits);
}

/**
 * Verifies and applies a patch in a helper process of its own, started for this call and stopped
 * after it (all-or-nothing, see `verifyPatch` and `PatchPlan.commit`), so the host's event loop
 * only relays frames: reading, matching, diffing and writing happen in the helper, optionally
 * wrapped in a sandbox by `wrap`. Resolves with the result; throws an `ApplyPatchError`
 * (`HELPER_FAILED` when the helper itself broke). The tool keeps one helper per session instead
 * (see `HelperPool`), which answers the same way.
 */
export function applyPatchInHelper(patch: string, options: HelperApplyOptions): Promise<ApplyPatchResult> {
  if (options.signal?.aborted) return Promise.reject(new ApplyPatchError('ABORTED', 'apply_patch was aborted before any file was written'));
  let command: HelperCommand;
  try {
    command = helperCommand(options.heapMb);
    if (options.wrap) command = options.wrap(command);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<ApplyPatchResult>((resolve, reject) => {
    const child = spawnHelper(command);
    const reader = new FrameReader(FROM_HELPER, answerFrameLimit(patch, options.limits));
    const run = new HelperRun({
      options,
      resolve,
      reject,
      channel: {
        send: (header, blobs) => writeFrame(child, header, blobs),
        // One call, one process: whatever the outcome, it is stopped.
        done: () => stopHelper(child),
      },
    });
    watchHelper(child, reader, () => run);
    run.start(patch);
  });
}

/** Spawns a helper process with pipes; `release` runs once it is gone (or never started). */
export function spawnHelper(command: HelperCommand): ChildProcessWithoutNullStreams {
  const child = spawn(command.file, command.args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, ...(command.env ? { env: command.env } : {}) });
  child.stdin.on('error', () => {
    // The helper exited early; its exit is reported to the run.
  });
  if (command.release) {
    const release = command.release;
    child.once('close', release);
    child.once('error', release);
  }
  return child;
}

/** Writes one frame to the helper's stdin (nothing once stdin is closed). */
export function writeFrame(child: ChildProcessWithoutNullStreams, message: HostToHelper, blobs: Buffer[] = []): void {
  if (child.stdin.destroyed || child.stdin.writableEnded) return;
  for (const part of encodeFrame(message, blobs)) child.stdin.write(part);
}

/** Kills a helper that is still running. */
export function stopHelper(child: ChildProcessWithoutNullStreams): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Milliseconds a run waits, once its helper exited, for the rest of the helper's output (a frame cut short is told apart from an exit). */
const OUTPUT_DRAIN_MS = 2_000;

/**
 * Relays a helper's output to whichever run is current (`current()`): its frames, a frame that
 * breaks the protocol (a `HelperFrameError`, also for a stream that ends inside a frame), its
 * stderr (for the crash message), a failed start, and its exit.
 */
export function watchHelper(child: ChildProcessWithoutNullStreams, reader: FrameReader<HelperToHost>, current: () => HelperRun | undefined): void {
  let broken = false;
  const malformed = (error: HelperFrameError) => {
    broken = true;
    current()?.fail('HELPER_FAILED', `apply_patch helper sent a malformed answer (${error.message}); no file was changed`);
  };
  child.on('error', (error) => current()?.fail('HELPER_FAILED', `apply_patch helper could not start: ${error.message}; no file was changed`));
  child.stderr.on('data', (chunk: Buffer) => current()?.addStderr(chunk));
  child.stdout.on('end', () => {
    const cut = broken ? undefined : reader.ended();
    if (cut) malformed(cut);
  });
  child.stdout.on('data', (chunk: Buffer) => {
    if (broken) return;
    let frames: Array<Frame<HelperToHost>>;
    try {
      frames = reader.push(chunk);
    } catch (error) {
      malformed(error as HelperFrameError);
      return;
    }
    for (const frame of frames) {
      const run = current();
      // A frame no run waits for (a helper speaking out of turn) breaks the protocol.
      if (!run) {
        stopHelper(child);
        return;
      }
      if (!run.onFrame(frame)) return;
    }
  });
  child.on('exit', (code, signal) => {
    const report = () => current()?.onExit(code, signal);
    if (child.stdout.readableEnded || child.stdout.destroyed) return report();
    // The rest of its output first: a frame it cut short is reported as such, not as the exit.
    const timer = setTimeout(report, OUTPUT_DRAIN_MS);
    timer.unref();
    child.stdout.once('close', () => {
      clearTimeout(timer);
      report();
    });
  });
}

/** Where a helper run is: verifying, waiting for `onVerified`, writing, or answered. */
type HelperStage = 'verifying' | 'deciding' | 'committing' | 'settled';

/**
 * How a run talks to its helper: `send` a frame; `done` once the run is answered — `reusable`
 * when the helper is back to waiting for a request (it answered, refused, or was told to drop the
 * verified patch), false when it must be stopped (it broke, timed out, or is busy with a patch the
 * host gave up on).
 */
export interface HelperChannel {
  send(message: HostToHelper, blobs?: Buffer[]): void;
  done(reusable: boolean): void;
}

/**
 * One patch through a helper process, from the request to its single answer: the request, the
 * verified frame, the host's decision, the commit — and the timeout, the abort, a malformed or
 * unexpected frame and an early exit, each of which ends the run once.
 */
export class HelperRun {
  private readonly options: HelperApplyOptions;
  private readonly resolve: (result: VerifiedAnswer) => void;
  private readonly reject: (error: unknown) => void;
  private readonly channel: HelperChannel;
  private stage: HelperStage = 'verifying';
  /** True when the helper was gone before it answered anything (nothing was written: no commit was sent). */
  exitedBeforeAnswer = false;
  private verified: VerifiedAnswer | undefined;
  private stderr = '';
  private timer: NodeJS.Timeout | undefined;

  constructor({ options, resolve, reject, channel }: { options: HelperApplyOptions; resolve: (result: VerifiedAnswer) => void; reject: (error: unknown) => void; channel: HelperChannel }) {
    this.options = options;
    this.resolve = resolve;
    this.reject = reject;
    this.channel = channel;
  }

  /** Sends the helper the patch (and the turn's baselines, when the helper is new to it) and starts the clock. */
  start(patch: string, instance = 0): void {
    const options = this.options;
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.timer = setTimeout(() => this.onTimeout(), options.timeoutMs ?? 120_000);
    const turn = options.turn?.(instance);
    const seed = turn?.seed ? encodeSeed(turn.seed, 1) : undefined;
    const request: HostToHelper = {
      t: 'apply',
      patch: 0,
      root: options.root,
      allowOutsideRoot: options.allowOutsideRoot ?? false,
      ...(options.protectedNames ? { protectedNames: [...options.protectedNames] } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(turn ? { turn: { token: turn.token, ...(seed ? { seed: seed.seed } : {}) } } : {}),
    };
    this.channel.send(request, [Buffer.from(patch, 'utf8'), ...(seed?.blobs ?? [])]);
  }

  /** True once the run is answered. */
  get settled(): boolean {
    return this.stage === 'settled';
  }

  /** Keeps the start of the helper's stderr, for the message of a crash. */
  addStderr(chunk: Buffer): void {
    if (this.stderr.length < MAX_STDERR) this.stderr += chunk.toString('utf8').slice(0, MAX_STDERR - this.stderr.length);
  }

  private settle(outcome: { result: VerifiedAnswer } | { error: unknown }, reusable = false): void {
    if (this.stage === 'settled') return;
    this.stage = 'settled';
    clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.channel.done(reusable);
    if ('result' in outcome) this.resolve(outcome.result);
    else this.reject(outcome.error);
  }

  /** Ends the run with an `ApplyPatchError`; the helper is stopped. */
  fail(code: ApplyPatchErrorCode, message: string): void {
    this.settle({ error: new ApplyPatchError(code, message) });
  }

  /** Tells a helper holding a verified patch to drop it, and ends the run with `error`; the helper stays usable. */
  private drop(error: unknown): void {
    this.channel.send({ t: 'abort' });
    this.settle({ error }, true);
  }

  private readonly onAbort = () => {
    // Only before the commit: a commit in progress finishes (all-or-nothing). A helper still
    // verifying is stopped; one waiting for the decision drops the patch.
    const error = new ApplyPatchError('ABORTED', 'apply_patch was aborted before any file was written');
    if (this.stage === 'verifying') this.settle({ error });
    else if (this.stage === 'deciding') this.drop(error);
  };

  /** Handles one frame of the helper's answer (validated against the table as it arrived); `false` once the run is answered. */
  onFrame({ message, blobs }: Frame<HelperToHost>): boolean {
    if (message.t === 'error' && this.stage !== 'settled') {
      const error = new ApplyPatchError(message.code, message.message, message.unrestoredPaths ? { unrestoredPaths: message.unrestoredPaths } : {});
      // A refusal while verifying or a failed commit: the helper is waiting for the next request.
      this.settle({ error }, this.stage === 'verifying' || this.stage === 'committing');
      return false;
    }
    if (message.t === 'verified' && this.stage === 'verifying') {
      this.verified = decodeVerified(message, blobs);
      this.stage = 'deciding';
      void this.decide(this.verified);
      return true;
    }
    if (message.t === 'committed' && this.stage === 'committing' && this.verified) {
      this.settle({ result: this.verified }, true);
      return false;
    }
    this.fail('HELPER_FAILED', `apply_patch helper sent an unexpected ${message.t} message`);
    return false;
  }

  private onTimeout(): void {
    this.fail('HELPER_FAILED', `apply_patch helper did not finish within ${this.options.timeoutMs ?? 120_000} ms and was stopped; ${this.writtenSoFar()}`);
  }

  /** The helper exited (or was killed) before answering. */
  onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stage === 'settled') return;
    if (this.stage === 'verifying') this.exitedBeforeAnswer = true;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const detail = this.stderr.trim() ? `: ${lastLine(this.stderr)}` : '';
    this.fail('HELPER_FAILED', `apply_patch helper ${how}${detail}; ${this.writtenSoFar()}`);
  }

  /** What a failure tells about the workspace: a helper stopped while committing may have written part of the patch. */
  private writtenSoFar(): string {
    return this.stage === 'committing' ? 'files may have been partly written' : 'no file was changed';
  }

  /** Asks the host (`onVerified`) and then tells the helper to commit, or drops the patch. */
  private async decide(result: ApplyPatchResult): Promise<void> {
    let go: boolean;
    try {
      go = this.options.onVerified ? await this.options.onVerified(result) : true;
    } catch (error) {
      if (this.stage === 'deciding') this.drop(error);
      return;
    }
    if (this.stage !== 'deciding') return;
    if (!go || this.options.signal?.aborted) {
      this.drop(new ApplyPatchError('ABORTED', 'apply_patch was aborted before any file was written'));
      return;
    }
    this.stage = 'committing';
    this.channel.send({ t: 'commit' });
  }
}

/** The last non-empty line of a text (a crash's most telling line). */
function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1].slice(0, 500);
}
