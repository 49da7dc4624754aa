import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ApplyPatchError, type ApplyPatchErrorCode } from './apply-patch-error';
import { FrameReader, encodeFrame } from './helper-frames';
import { decodeVerified, type HelperApplyRequest } from './helper-protocol';
import { DEFAULT_PATCH_LIMITS, type PatchLimits } from './limits';
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
  const limits = { ...DEFAULT_PATCH_LIMITS, ...options.limits };
  return new Promise<ApplyPatchResult>((resolve, reject) => {
    const child = spawn(command.file, command.args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, ...(command.env ? { env: command.env } : {}) });
    let stage: 'verifying' | 'deciding' | 'committing' | 'settled' = 'verifying';
    let verified: ApplyPatchResult | undefined;
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const reader = new FrameReader(limits.maxTotalBytes * 4 + limits.maxPatchBytes + 16 * 1024 * 1024);

    const settle = (outcome: { result: ApplyPatchResult } | { error: unknown }) => {
      if (stage === 'settled') return;
      stage = 'settled';
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if ('result' in outcome) resolve(outcome.result);
      else reject(outcome.error);
    };
    const fail = (code: ApplyPatchErrorCode, message: string) => settle({ error: new ApplyPatchError(code, message) });
    const onAbort = () => {
      // Only before the commit: a commit in progress finishes (all-or-nothing).
      if (stage === 'verifying' || stage === 'deciding') fail('ABORTED', 'apply_patch was aborted before any file was written');
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => {
      const written = stage === 'committing' ? 'files may have been partly written' : 'no file was changed';
      fail('HELPER_FAILED', `apply_patch helper did not finish within ${options.timeoutMs ?? 120_000} ms and was stopped; ${written}`);
    }, options.timeoutMs ?? 120_000);

    child.on('error', (error) => fail('HELPER_FAILED', `apply_patch helper could not start: ${error.message}; no file was changed`));
    child.stdin.on('error', () => {
      // The helper exited early; its exit is reported below.
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString('utf8').slice(0, MAX_STDERR - stderr.length);
    });
    child.stdout.on('data', (chunk: Buffer) => {
      let frames;
      try {
        frames = reader.push(chunk);
      } catch (error) {
        fail('HELPER_FAILED', `apply_patch helper sent a malformed answer (${(error as Error).message})`);
        return;
      }
      for (const frame of frames) {
        const header = frame.header;
        if (header.type === 'error') {
          const error = new ApplyPatchError(header.code as ApplyPatchErrorCode, String(header.message), {
            ...(Array.isArray(header.unrestoredPaths) ? { unrestoredPaths: header.unrestoredPaths as string[] } : {}),
          });
          settle({ error });
          return;
        }
        if (header.type === 'verified' && stage === 'verifying') {
          try {
            verified = decodeVerified(header, frame.blobs);
          } catch (error) {
            fail('HELPER_FAILED', `apply_patch helper sent a malformed answer (${(error as Error).message})`);
            return;
          }
          stage = 'deciding';
          void decide(verified);
          continue;
        }
        if (header.type === 'committed' && stage === 'committing' && verified) {
          settle({ result: verified });
          return;
        }
        fail('HELPER_FAILED', `apply_patch helper sent an unexpected ${String(header.type)} message`);
        return;
      }
    });
    child.on('exit', (code, signal) => {
      if (stage === 'settled') return;
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const detail = stderr.trim() ? `: ${lastLine(stderr)}` : '';
      const written = stage === 'committing' ? 'files may have been partly written' : 'no file was changed';
      fail('HELPER_FAILED', `apply_patch helper ${how}${detail}; ${written}`);
    });

    const decide = async (result: ApplyPatchResult) => {
      let go: boolean;
      try {
        go = options.onVerified ? await options.onVerified(result) : true;
      } catch (error) {
        settle({ error });
        return;
      }
      if (stage !== 'deciding') return;
      if (!go || options.signal?.aborted) {
        child.stdin.end();
        fail('ABORTED', 'apply_patch was aborted before any file was written');
        return;
      }
      stage = 'committing';
      for (const part of encodeFrame({ type: 'commit' })) child.stdin.write(part);
      child.stdin.end();
    };

    const request: HelperApplyRequest = {
      type: 'apply',
      root: options.root,
      allowOutsideRoot: options.allowOutsideRoot ?? false,
      ...(options.protectedNames ? { protectedNames: options.protectedNames } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
    };
    for (const part of encodeFrame(request as unknown as Record<string, unknown>, [Buffer.from(patch, 'utf8')])) child.stdin.write(part);
  });
}

/** The last non-empty line of a text (a crash's most telling line). */
function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1].slice(0, 500);
}
