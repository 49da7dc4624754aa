import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ApplyPatchError, type ApplyPatchErrorCode } from './apply-patch-error';
import { FrameReader, encodeFrame, type Frame } from './helper-frames';
import { decodeVerified, type HelperApplyRequest } from './helper-protocol';
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
}

/**
 * The argv that runs the helper script with this Node binary (the TypeScript source via tsx when
 * not built), and what it reads. The built helper is one file with its dependencies bundled in,
 * so its package folder (for `"type": "module"`) and Node are all it needs.
 */
export function helperCommand(heapMb = 2048): HelperCommand {
  const here = currentModuleUrl();
  const flags = [`--max-old-space-size=${heapMb}`];
  const node = realpathSync(process.execPath);
  const packageRoot = realpathSync(fileURLToPath(new URL('..', here)));
  if (here.endsWith('.ts')) {
    // Running from source (tests, development): the helper is TypeScript too.
    const tsx = createRequire(here).resolve('tsx');
    const script = fileURLToPath(new URL('./apply-patch-helper.ts', here));
    return {
      file: node,
      args: [...flags, '--import', pathToFileURL(tsx).href, '--conditions=@switchyard/source', script],
      reads: [node, checkoutRoot(packageRoot) ?? packageRoot],
    };
  }
  return { file: node, args: [...flags, fileURLToPath(new URL('./apply-patch-helper.js', here))], reads: [node, packageRoot] };
}

/** The pnpm workspace holding `folder` (where tsx and the sources' modules are installed), if any. */
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

/**
 * Verifies and applies a patch in a helper process (all-or-nothing, see `verifyPatch` and
 * `PatchPlan.commit`), so the host's event loop only relays frames: reading, matching, diffing
 * and writing happen in the helper, optionally wrapped in a sandbox by `wrap`. Resolves with the
 * result; throws an `ApplyPatchError` (`HELPER_FAILED` when the helper itself broke).
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
  return new Promise<ApplyPatchResult>((resolve, reject) => new HelperRun({ options, resolve, reject }).start(command, patch));
}

/** Where a helper run is: verifying, waiting for `onVerified`, writing, or answered. */
type HelperStage = 'verifying' | 'deciding' | 'committing' | 'settled';

/**
 * One helper process from spawn to its single answer: the request, the verified frame, the
 * host's decision, the commit — and the timeout, the abort, a malformed or unexpected frame and
 * an early exit, each of which ends the run once.
 */
class HelperRun {
  private readonly options: HelperApplyOptions;
  private readonly resolve: (result: ApplyPatchResult) => void;
  private readonly reject: (error: unknown) => void;
  // Set by start(), sized to the patch.
  private reader!: FrameReader;
  // Set by start(), before anything can settle the run.
  private child!: ChildProcessWithoutNullStreams;
  private stage: HelperStage = 'verifying';
  private verified: ApplyPatchResult | undefined;
  private stderr = '';
  private timer: NodeJS.Timeout | undefined;

  constructor({ options, resolve, reject }: { options: HelperApplyOptions; resolve: (result: ApplyPatchResult) => void; reject: (error: unknown) => void }) {
    this.options = options;
    this.resolve = resolve;
    this.reject = reject;
  }

  /** Spawns the helper, watches it and sends it the patch. */
  start(command: HelperCommand, patch: string): void {
    const options = this.options;
    const limits = { ...DEFAULT_PATCH_LIMITS, ...options.limits };
    const patchBytes = Buffer.byteLength(patch, 'utf8');
    // contents and diffs as blobs, plus the header a patch of this size can need
    this.reader = new FrameReader(limits.maxTotalBytes * 4 + limits.maxPatchBytes + 16 * 1024 * 1024 + maxAnswerHeaderBytes(patchBytes, limits));
    const child = spawn(command.file, command.args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, ...(command.env ? { env: command.env } : {}) });
    this.child = child;
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.timer = setTimeout(() => this.onTimeout(), options.timeoutMs ?? 120_000);
    child.on('error', (error) => this.fail('HELPER_FAILED', `apply_patch helper could not start: ${error.message}; no file was changed`));
    child.stdin.on('error', () => {
      // The helper exited early; its exit is reported below.
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (this.stderr.length < MAX_STDERR) this.stderr += chunk.toString('utf8').slice(0, MAX_STDERR - this.stderr.length);
    });
    child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    child.on('exit', (code, signal) => this.onExit(code, signal));
    if (command.release) {
      const release = command.release;
      child.once('close', release);
      child.once('error', release);
    }
    const request: HelperApplyRequest = {
      type: 'apply',
      root: options.root,
      allowOutsideRoot: options.allowOutsideRoot ?? false,
      ...(options.protectedNames ? { protectedNames: options.protectedNames } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
    };
    for (const part of encodeFrame(request as unknown as Record<string, unknown>, [Buffer.from(patch, 'utf8')])) child.stdin.write(part);
  }

  private settle(outcome: { result: ApplyPatchResult } | { error: unknown }): void {
    if (this.stage === 'settled') return;
    this.stage = 'settled';
    clearTimeout(this.timer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    const child = this.child;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if ('result' in outcome) this.resolve(outcome.result);
    else this.reject(outcome.error);
  }

  private fail(code: ApplyPatchErrorCode, message: string): void {
    this.settle({ error: new ApplyPatchError(code, message) });
  }

  private readonly onAbort = () => {
    // Only before the commit: a commit in progress finishes (all-or-nothing).
    if (this.stage === 'verifying' || this.stage === 'deciding') this.fail('ABORTED', 'apply_patch was aborted before any file was written');
  };

  private onStdout(chunk: Buffer): void {
    let frames;
    try {
      frames = this.reader.push(chunk);
    } catch (error) {
      this.fail('HELPER_FAILED', `apply_patch helper sent a malformed answer (${(error as Error).message})`);
      return;
    }
    for (const frame of frames) {
      if (!this.onFrame(frame)) return;
    }
  }

  /** Handles one frame of the helper's answer; `false` once the run is answered. */
  private onFrame(frame: Frame): boolean {
    const header = frame.header;
    if (header.type === 'error') {
      const error = new ApplyPatchError(header.code as ApplyPatchErrorCode, String(header.message), {
        ...(Array.isArray(header.unrestoredPaths) ? { unrestoredPaths: header.unrestoredPaths as string[] } : {}),
      });
      this.settle({ error });
      return false;
    }
    if (header.type === 'verified' && this.stage === 'verifying') {
      try {
        this.verified = decodeVerified(header, frame.blobs);
      } catch (error) {
        this.fail('HELPER_FAILED', `apply_patch helper sent a malformed answer (${(error as Error).message})`);
        return false;
      }
      this.stage = 'deciding';
      void this.decide(this.verified);
      return true;
    }
    if (header.type === 'committed' && this.stage === 'committing' && this.verified) {
      this.settle({ result: this.verified });
      return false;
    }
    this.fail('HELPER_FAILED', `apply_patch helper sent an unexpected ${String(header.type)} message`);
    return false;
  }

  private onTimeout(): void {
    this.fail('HELPER_FAILED', `apply_patch helper did not finish within ${this.options.timeoutMs ?? 120_000} ms and was stopped; ${this.writtenSoFar()}`);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stage === 'settled') return;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const detail = this.stderr.trim() ? `: ${lastLine(this.stderr)}` : '';
    this.fail('HELPER_FAILED', `apply_patch helper ${how}${detail}; ${this.writtenSoFar()}`);
  }

  /** What a failure tells about the workspace: a helper stopped while committing may have written part of the patch. */
  private writtenSoFar(): string {
    return this.stage === 'committing' ? 'files may have been partly written' : 'no file was changed';
  }

  /** Asks the host (`onVerified`) and then tells the helper to commit, or ends the run. */
  private async decide(result: ApplyPatchResult): Promise<void> {
    let go: boolean;
    try {
      go = this.options.onVerified ? await this.options.onVerified(result) : true;
    } catch (error) {
      this.settle({ error });
      return;
    }
    if (this.stage !== 'deciding') return;
    const stdin = this.child.stdin;
    if (!go || this.options.signal?.aborted) {
      stdin.end();
      this.fail('ABORTED', 'apply_patch was aborted before any file was written');
      return;
    }
    this.stage = 'committing';
    for (const part of encodeFrame({ type: 'commit' })) stdin.write(part);
    stdin.end();
  }
}

/** The last non-empty line of a text (a crash's most telling line). */
function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1].slice(0, 500);
}
