import {
  RespondToModelError,
  isJsonObject,
  type HookToolInput,
  type JsonValue,
  type SandboxMode,
  type SwitchyardEvent,
  type ToolExecutor,
  type ToolInvocation,
} from '@switchyard/protocol';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FunctionToolOutput, defineFreeformTool } from '@switchyard/kit';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import { assertSandbox, sandboxCommand, sandboxEnvironment, scanProtectedPaths, type SandboxPolicy } from '@switchyard/sandbox';
import { isApplyPatchError, type ApplyPatchErrorCode } from './apply-patch-error';
import { DEFAULT_PATCH_LIMITS, formatBytes, type PatchLimits } from './limits';
import { HelperPool, type HelperLaunch } from './helper-pool';
import type { VerifiedAnswer } from './helper-protocol';
import { helperCommand, type HelperCommand } from './run-helper';
import { APPLY_PATCH_GRAMMAR } from './grammar/apply-patch.generated';
import { lazyProperty } from './lazy-property';
import { turnDiffTracker } from './turn-diff';
import type { ApplyPatchResult, FileChange } from './verify-patch';

/** The description the model reads. */
export const APPLY_PATCH_DESCRIPTION = 'Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.';

/**
 * What the model reads for an applied patch: the summary inside the reference's shell-output frame
 * (`Exit code: 0`, `Wall time: N seconds` in whole seconds, `Output:`), as its apply_patch answers.
 */
export function appliedPatchText(summary: string, wallTimeMs: number): string {
  return `Exit code: 0\nWall time: ${Math.round(wallTimeMs / 1000)} seconds\nOutput:\n${summary}`;
}

/** Options of {@link applyPatchTool}. */
export interface ApplyPatchToolOptions {
  /** Workspace root. Default: the step's `cwd` (the session's workspace). */
  root?: string;
  /** Accept paths outside the root (`..`, absolute paths elsewhere, links leaving it). Default false. */
  allowOutsideRoot?: boolean;
  /**
   * Apply patches even when the step's `sandboxMode` is `read-only`. Default false: under a
   * read-only sandbox every call is refused with {@link READ_ONLY_SANDBOX_ERROR} before anything
   * is read or written.
   */
  allowWritesInReadOnly?: boolean;
  /** Names never written at any depth (case-insensitive), also through links. Default `['.git']`. */
  protectedNames?: readonly string[];
  /** Size and line caps (see `PatchLimits`): 64 MiB per file, 2,000,000 lines, 64 MiB patches, 256 MiB per patch in total, 20,000 files per patch. */
  limits?: Partial<PatchLimits>;
  /**
   * The sandbox the helper process writes in — the same bubblewrap sandbox `exec_command` uses
   * (`@switchyard/sandbox`). `mode` defaults to the step's `sandboxMode`; without one (or with
   * `danger-full-access`) the helper runs unsandboxed. Pass the exec tools' `writableRoots`,
   * `bwrapPath` and `sandboxUser` here so both tools share one policy.
   */
  sandbox?: Partial<Omit<SandboxPolicy, 'root'>>;
  /**
   * Wraps the helper process's argv instead of the sandbox (a host's own launcher). Called when a
   * session's helper starts, with the invocation of the call that starts it; the helper then
   * serves that session's later patches in the same workspace. Default: the sandbox of `sandbox` /
   * the step, else run it as is (the helper still resolves every path without following links,
   * see the README).
   */
  wrapHelper?: (command: HelperCommand, invocation: ToolInvocation) => HelperCommand;
  /** Heap of the helper process in MiB. Default 2048. */
  helperHeapMb?: number;
}

/** Codes of refusals found while verifying (nothing was started): the model reads "apply_patch verification failed: …". */
const VERIFICATION_CODES: ReadonlySet<ApplyPatchErrorCode> = new Set(['INVALID_PATCH', 'INVALID_HUNK', 'VERIFICATION_FAILED', 'PATH_OUTSIDE_ROOT', 'PROTECTED_PATH', 'LIMIT_EXCEEDED']);

/**
 * What the model reads for a patch without a single file section (`*** Begin Patch` then
 * `*** End Patch`): Codex's tool rejects such a patch before anything runs, with this text (its
 * library and command line say "No files were modified.", which `applyPatch` keeps).
 */
const EMPTY_PATCH_ERROR = 'patch rejected: empty patch';

/** The model-visible error of a call made under a `read-only` sandbox. */
export const READ_ONLY_SANDBOX_ERROR = 'apply_patch is not allowed: the sandbox is read-only';

/** What a Code Mode cell (and a PostToolUse hook) receives after a successful patch. */
export interface ApplyPatchToolResult {
  status: 'completed';
  added: string[];
  modified: string[];
  deleted: string[];
}

const REWRITE_ERROR = 'hook returned updatedInput without string field `command`';

function hookInput(invocation: ToolInvocation): HookToolInput | undefined {
  if (invocation.payload.kind !== 'custom') return undefined;
  return { toolName: 'apply_patch', aliases: ['Write', 'Edit'], toolInput: { command: invocation.payload.input } };
}

function emitSafely(invocation: ToolInvocation, name: string, data: Record<string, unknown>): void {
  const event: SwitchyardEvent = { type: 'tool-notification', callId: invocation.callId, name, data: data as JsonValue };
  try {
    invocation.emit?.(event);
  } catch {
    // A broken listener must not fail the patch.
  }
}

const jsonChanges = (changes: FileChange[]) => changes as unknown as JsonValue;


const APPLY_PATCH_OPTION_RULES: OptionsShape<ApplyPatchToolOptions> = {
  root: rule.string(),
  allowOutsideRoot: rule.boolean(),
  allowWritesInReadOnly: rule.boolean(),
  protectedNames: rule.listOf(rule.string()),
  limits: rule.shape<Partial<PatchLimits>>({
    maxFileBytes: rule.number({ min: 1, integer: true }),
    maxFileLines: rule.number({ min: 1, integer: true }),
    maxPatchBytes: rule.number({ min: 1, integer: true }),
    maxTotalBytes: rule.number({ min: 1, integer: true }),
    maxFiles: rule.number({ min: 1, integer: true }),
  }),
  wrapHelper: rule.function(),
  helperHeapMb: rule.number({ min: 16, integer: true }),
  sandbox: rule.object(),
};

/** Milliseconds a helper of a workspace with its own `.git` (or unsandboxed) may sit idle: a session's patches reuse it. */
const IDLE_MS = 10 * 60_000;
/**
 * Milliseconds a sandboxed helper of a workspace without `.git` may sit idle: the sandbox holds an
 * empty read-only `<root>/.git` mount point while any sandboxed process runs there, and a workspace
 * that is not a repository should not keep one between bursts of patches.
 */
const PLACEHOLDER_IDLE_MS = 1_000;

/** How the tool starts a helper for one call's workspace: the pool key and the launch. */
interface HelperSetup {
  key: string;
  launch: () => Promise<HelperLaunch>;
}

/**
 * The helper's sandbox for this call: the exec sandbox of the configured (or the step's) mode, in
 * which the kernel — not a path check — keeps every write inside the writable roots and off
 * `.git`. `read-only` is refused before this (or, with `allowWritesInReadOnly`, patched under
 * `workspace-write`). The sandbox is checked when a helper starts: `SANDBOX_UNAVAILABLE` when it
 * cannot; never falls back to writing unsandboxed.
 */
function helperSetup(options: ApplyPatchToolOptions, invocation: ToolInvocation, root: string): HelperSetup {
  const heapMb = options.helperHeapMb;
  if (options.wrapHelper) {
    const wrapHelper = options.wrapHelper;
    return { key: `wrap\u0000${root}`, launch: async () => ({ command: wrapHelper(helperCommand(heapMb), invocation), idleMs: IDLE_MS }) };
  }
  const requested = options.sandbox?.mode ?? invocation.step.sandboxMode;
  if (requested === undefined || requested === 'danger-full-access') {
    return { key: `none\u0000${root}`, launch: async () => ({ command: helperCommand(heapMb), idleMs: IDLE_MS }) };
  }
  const mode: SandboxMode = requested === 'read-only' ? 'workspace-write' : requested;
  const policy: SandboxPolicy = { ...options.sandbox, mode, root };
  return {
    key: `sandbox\u0000${JSON.stringify(policy)}`,
    async launch() {
      await assertSandbox(policy);
      const command = helperCommand(heapMb);
      // walked without blocking the event loop, then handed to the sandbox
      const scanned = await scanProtectedPaths(policy);
      const idleMs = (await stat(join(root, '.git')).then(() => true, () => false)) ? IDLE_MS : PLACEHOLDER_IDLE_MS;
      const wrapped = sandboxCommand([command.file, ...command.args], policy, { cwd: root, readOnlyPaths: command.reads, protectedPaths: scanned });
      return {
        idleMs,
        command: {
          file: wrapped.file,
          args: wrapped.args,
          env: sandboxEnvironment({ mode, writable: [root, ...(policy.writableRoots ?? [])] }),
          // the helper's cgroups and, after the last sandboxed process, the empty <root>/.git placeholder
          release: () => wrapped.release(),
        },
      };
    },
  };
}

/**
 * The `apply_patch` freeform tool, all-or-nothing: the patch is parsed and verified against the
 * workspace before anything is written, written atomically, and rolled back if a write fails —
 * all in a helper process, inside the exec sandbox when a sandbox mode is set (the step's, or
 * `sandbox.mode`), so the kernel keeps the writes in the workspace. Emits `patch-apply-begin` / `patch-apply-end` / `turn-diff` notifications,
 * keeps the turn's diff in `step.turnState` (see `getTurnDiff`) and talks to hooks as
 * `apply_patch` (aliases `Write`, `Edit`) with `{ command: patch }`. Refuses every call when the
 * step's sandbox is `read-only` (unless `allowWritesInReadOnly`).
 */
export function applyPatchTool(options: ApplyPatchToolOptions = {}): ToolExecutor {
  checkOptions('applyPatchTool', options, APPLY_PATCH_OPTION_RULES);
  const pool = new HelperPool();
  const executor = defineFreeformTool({
    name: 'apply_patch',
    description: APPLY_PATCH_DESCRIPTION,
    grammar: { syntax: 'lark', definition: APPLY_PATCH_GRAMMAR },
    hookPayload: {
      pre: hookInput,
      post(invocation, output) {
        const input = hookInput(invocation);
        if (!input) return undefined;
        const response = output.postToolUseResponse?.(invocation.payload) ?? output.codeModeResult(invocation.payload);
        return { input, response };
      },
      rewrite(_invocation, updatedInput) {
        if (!isJsonObject(updatedInput) || typeof updatedInput.command !== 'string') throw new RespondToModelError(REWRITE_ERROR);
        return { kind: 'custom', input: updatedInput.command };
      },
    },
    async handle({ input, signal, invocation }) {
      const started = Date.now();
      if (invocation.step.sandboxMode === 'read-only' && options.allowWritesInReadOnly !== true) {
        throw new RespondToModelError(READ_ONLY_SANDBOX_ERROR);
      }
      const maxPatchBytes = options.limits?.maxPatchBytes ?? DEFAULT_PATCH_LIMITS.maxPatchBytes;
      if (input.length > maxPatchBytes || Buffer.byteLength(input, 'utf8') > maxPatchBytes) {
        throw new RespondToModelError(
          `apply_patch verification failed: the patch is ${formatBytes(Buffer.byteLength(input, 'utf8'))}; apply_patch accepts patches of at most ${formatBytes(maxPatchBytes)}`,
          { code: 'LIMIT_EXCEEDED' },
        );
      }
      const root = options.root ?? invocation.step.cwd;
      const setup = helperSetup(options, invocation, root);
      const helper = pool.helperFor(invocation.step.sessionId, setup.key, setup.launch);
      const turnId = invocation.step.turnId;
      const tracker = turnDiffTracker(invocation.step);
      let changes: JsonValue | undefined;
      let result: VerifiedAnswer;
      try {
        result = await helper.apply(input, {
          root,
          allowOutsideRoot: options.allowOutsideRoot,
          protectedNames: options.protectedNames,
          limits: options.limits,
          signal,
          turn: (instance) => tracker.helperTurn(setup.key, instance),
          onVerified(verified) {
            changes = jsonChanges(verified.changes);
            emitSafely(invocation, 'patch-apply-begin', { turnId, autoApproved: true, changes });
            return !signal.aborted;
          },
        });
      } catch (error) {
        if (!isApplyPatchError(error)) throw error;
        if (error.code === 'NO_CHANGES') throw new RespondToModelError(EMPTY_PATCH_ERROR, { cause: error });
        if (changes === undefined && VERIFICATION_CODES.has(error.code)) {
          throw new RespondToModelError(`apply_patch verification failed: ${error.message}`, { cause: error, code: error.code === 'LIMIT_EXCEEDED' ? 'LIMIT_EXCEEDED' : undefined });
        }
        if (changes !== undefined) {
          emitSafely(invocation, 'patch-apply-end', { turnId, success: false, status: 'failed', stdout: '', stderr: error.message, changes });
        }
        throw new RespondToModelError(error.message, { cause: error, code: error.code === 'ABORTED' ? 'ABORTED' : undefined });
      }
      if (result.turnFiles) tracker.recordDiffs(result.turnFiles);
      else tracker.record(result.files);
      emitSafely(invocation, 'patch-apply-end', { turnId, success: true, status: 'completed', stdout: result.summary, stderr: '', changes: changes ?? jsonChanges(result.changes) });
      emitSafely(invocation, 'turn-diff', lazyProperty({ turnId }, 'unifiedDiff', tracker.unifiedDiffSnapshot()));
      const outcome: ApplyPatchToolResult = { status: 'completed', added: result.added, modified: result.modified, deleted: result.deleted };
      return new FunctionToolOutput(appliedPatchText(result.summary, Date.now() - started), true, { ...outcome });
    },
  });
  // A session's helpers end with it (each session calls this once, with its id).
  return { ...executor, dispose: (context) => pool.dispose(context?.sessionId) };
}
