import { stat } from 'node:fs/promises';
import { RespondToModelError, type SandboxMode, type ToolInvocation } from '@switchyard/protocol';
import { isLikelySandboxDenial, type SandboxPolicy } from '@switchyard/sandbox';
import { BARE_PATCH_MESSAGE, isBarePatch, routeApplyPatch } from './apply-patch-interception';
import { escalationRefusedMessage, requireApproval } from './approval';
import { deliverOnExit } from './background-exit';
import { abortError, emit, waitForProcess } from './call-progress';
import { parseExecArgs, type ExecCommandArgs } from './exec-arguments';
import { launchCommand, type LaunchRequest } from './exec-launch';
import { resolveSettings, resolveShell, resolveWorkdir, sandboxPolicy, type CallSettings } from './exec-options';
import { ExecCommandOutput, chunkId, type ExecResult } from './exec-output';
import type { ExecProcess } from './exec-process';
import { sweepEarlierTurns } from './process-hygiene';
import { isKnownSafeCommand } from './safe-command';
import { ensureOpen, type ToolsetState } from './toolset-state';

/** What a run of the command left: its process, its output so far, whether the sandbox likely stopped it. */
interface RunResult {
  execProcess: ExecProcess;
  output: string;
  sandboxDenied: boolean;
}

/** A command line as the reference prints it: words joined by spaces, single-quoted unless plain. */
function shellJoin(words: readonly string[]): string {
  return words.map((word) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * One exec_command call: its checks, apply_patch interception, approval, the sandboxed run (under
 * `on-failure` retried outside the sandbox after a likely denial), and the answer: the exit code,
 * or a session id for write_stdin (and the exit later, when the step delivers in the background).
 */
export class ExecCall implements LaunchRequest {
  private constructor(
    readonly state: ToolsetState,
    readonly invocation: ToolInvocation,
    readonly args: ExecCommandArgs,
    /** The call's policies: the options', else the step's, else the defaults. */
    readonly settings: CallSettings,
    /** The working directory: `workdir` resolved against the root. */
    readonly cwd: string,
    /** When the call started (epoch ms): its wall time and an abort's message count from here. */
    readonly started: number,
  ) {}

  /** exec_command: checks, apply_patch interception, approval, the sandboxed run, the answer. */
  static async handle(state: ToolsetState, invocation: ToolInvocation): Promise<ExecCommandOutput> {
    const started = Date.now();
    ensureOpen(state);
    const args = parseExecArgs(invocation, state.allowLoginShell);
    sweepEarlierTurns(state, invocation.step);
    const settings = resolveSettings(state.options, invocation.step);
    return new ExecCall(state, invocation, args, settings, resolveWorkdir(settings.root, args.workdir), started).run();
  }

  private async run(): Promise<ExecCommandOutput> {
    const { state, invocation, args, cwd } = this;
    await this.check();
    const intercepted = await this.interceptApplyPatch();
    if (intercepted) return intercepted;
    const mode = await this.approve();
    const release = await state.admission.acquire(invocation.step.sessionId, invocation.signal, () => abortError(this.started));
    try {
      ensureOpen(state);
      emit(invocation, 'exec-command-begin', { command: args.cmd, cwd, tty: args.tty, sandbox: mode });
      const result = await this.runWithDenialRetry(mode);
      return this.answer(result);
    } finally {
      release();
    }
  }

  /** The checks before anything runs: the workdir a directory, escalation allowed, no bare patch. */
  private async check(): Promise<void> {
    const { state, args, settings, cwd } = this;
    let reason: string | undefined = 'No such file or directory (os error 2)';
    try {
      reason = (await stat(cwd)).isDirectory() ? undefined : 'Not a directory (os error 20)';
    } catch {
      // reported below
    }
    if (reason) {
      // the reference's words: its process creation fails on the missing directory
      const line = shellJoin([resolveShell(state.options, args.shell), (args.login ?? state.allowLoginShell) ? '-lc' : '-c', args.cmd]);
      throw new RespondToModelError(`exec_command failed for \`${line}\`: CreateProcess { message: "Rejected(\\"Failed to create unified exec process: ${reason}\\")" }`);
    }
    if (args.escalate && settings.policy !== 'on-request') {
      throw new RespondToModelError(escalationRefusedMessage(settings.policy), { code: 'APPROVAL_DENIED' });
    }
    if (isBarePatch(args.cmd)) throw new RespondToModelError(BARE_PATCH_MESSAGE);
  }

  /** An `apply_patch` heredoc goes to the apply_patch tool (when the step has it); a success answers in this tool's frame. */
  private async interceptApplyPatch(): Promise<ExecCommandOutput | undefined> {
    const text = await routeApplyPatch(this.invocation, this.args.cmd, this.cwd, this.settings.root);
    if (text === undefined) return undefined;
    return new ExecCommandOutput({ chunkId: '', wallTimeMs: Date.now() - this.started, output: text, maxOutputTokens: this.args.maxOutputTokens, countTokens: false });
  }

  /** The approval request of this command; `escalated` asks to run it outside the sandbox. */
  private approvalRequest(request: { escalated: boolean; reason: string | undefined }) {
    return {
      kind: 'exec' as const,
      toolName: 'exec_command',
      callId: this.invocation.callId,
      command: this.args.cmd,
      cwd: this.cwd,
      reason: request.reason,
      escalated: request.escalated,
      signal: this.invocation.signal,
    };
  }

  /** Asks for approval where the policy wants it; returns the sandbox mode the command runs in. */
  private async approve(): Promise<SandboxMode> {
    const { state, args, settings } = this;
    if (args.escalate) {
      await requireApproval(settings.approvals, this.approvalRequest({ escalated: true, reason: args.justification }), state.memory, args.prefixRule);
      return 'danger-full-access';
    }
    if (settings.policy === 'untrusted' && !isKnownSafeCommand(args.cmd)) {
      await requireApproval(settings.approvals, this.approvalRequest({ escalated: false, reason: args.justification }), state.memory, args.prefixRule);
    }
    return settings.sandbox;
  }

  /** Runs the command in `mode`; under `on-failure`, a likely sandbox denial is retried outside the sandbox once approved. */
  private async runWithDenialRetry(mode: SandboxMode): Promise<RunResult> {
    const { state, settings } = this;
    const first = await this.runIn(sandboxPolicy(state.options, settings.root, mode));
    const denied = mode !== 'danger-full-access' && first.execProcess.exited && isLikelySandboxDenial(first.execProcess.exitCode as number, first.output);
    if (!denied || settings.policy !== 'on-failure') return { ...first, sandboxDenied: denied };
    await requireApproval(settings.approvals, this.approvalRequest({ escalated: true, reason: 'The command failed in the sandbox; run it again without the sandbox?' }), state.memory);
    return { ...(await this.runIn(sandboxPolicy(state.options, settings.root, 'danger-full-access'))), sandboxDenied: false };
  }

  /** Runs one process in `sandbox` for at most `yield_time_ms`; returns it with its output so far. */
  private async runIn(sandbox: SandboxPolicy): Promise<Omit<RunResult, 'sandboxDenied'>> {
    const { state, invocation, args } = this;
    const execProcess = await launchCommand(this, sandbox);
    state.inFlight.set(execProcess, invocation.step.sessionId);
    try {
      await waitForProcess(execProcess, args.yieldTimeMs, invocation.signal, this.started);
    } catch (error) {
      execProcess.kill();
      throw error;
    } finally {
      state.inFlight.delete(execProcess);
    }
    return { execProcess, output: await execProcess.takeOutput() };
  }

  /** The answer of a run: the exit code when it finished, else a session id for write_stdin. */
  private answer(run: RunResult): ExecCommandOutput {
    const { state, invocation, args, started } = this;
    const { execProcess, output } = run;
    const result: ExecResult = { chunkId: chunkId(), wallTimeMs: Date.now() - started, output, maxOutputTokens: args.maxOutputTokens };
    if (execProcess.exited) {
      emit(invocation, 'exec-command-end', { command: args.cmd, exit_code: execProcess.exitCode as number });
      return new ExecCommandOutput({ ...result, exitCode: execProcess.exitCode, hookCommand: args.cmd, ...(run.sandboxDenied ? { sandboxDenied: true } : {}) });
    }
    if (state.shuttingDown) {
      execProcess.kill();
      throw new RespondToModelError('exec tools are shut down', { code: 'SHUTTING_DOWN' });
    }
    const step = invocation.step;
    const entry = state.table.add({ process: execProcess, command: args.cmd, callId: invocation.callId, sessionId: step.sessionId, turnId: step.turnId });
    // the model's own calls only: a cell's nested call id is not one the model could match
    if (step.background && invocation.source.kind === 'direct') deliverOnExit(state.table, entry, step.background, { started, maxOutputTokens: args.maxOutputTokens });
    return new ExecCommandOutput({ ...result, sessionId: entry.id });
  }
}
