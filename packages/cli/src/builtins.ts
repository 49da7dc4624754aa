import type { ApprovalPolicy, SandboxMode, ToolExecutor } from '@switchyard/protocol';
import { clockTool } from '@switchyard/tool-clock';
import { contextRemainingTool } from '@switchyard/tool-context-remaining';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { execTools, type ExecTools } from '@switchyard/tool-exec';
import { checkSandbox } from '@switchyard/sandbox';

export interface Builtins {
  tools: ToolExecutor[];
  exec: ExecTools;
  sandbox: SandboxMode;
}

/** The signals on which the built-ins kill their tools' processes (and `mcp serve` closes cleanly). */
export const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Options of {@link builtinTools}. */
export interface BuiltinOptions {
  /**
   * Who ends the process on SIGINT / SIGTERM / SIGHUP, once the built-ins killed every process
   * their tools started: `'reraise'` (default) ends it with the same signal as soon as the exec
   * tools are shut down — for a command with nothing else of its own to clean up; `'leave'` leaves
   * it running, for a command that handles the signals itself (closes what it owns, then exits as
   * it says). Either way the built-ins' handler is gone once the exec tools are shut down, so a
   * second signal ends the process the default way.
   */
  onSignal?: 'reraise' | 'leave';
}

/**
 * The four built-ins for a workspace; exec_command sandboxed (`workspace-write` unless told). Until
 * the exec tools shut down (`exec.shutdown()`, which every command calls after the session's
 * shutdown), SIGINT / SIGTERM / SIGHUP first kill every process the tools started (an unsandboxed
 * command is in its own process group and would outlive the CLI), then end the CLI with the same
 * signal, or leave the exit to the command (`options.onSignal`).
 */
export function builtinTools(root: string, sandbox?: SandboxMode, approvalPolicy: ApprovalPolicy = 'never', options: BuiltinOptions = {}): Builtins {
  const mode: SandboxMode = sandbox ?? 'workspace-write';
  const reraise = options.onSignal !== 'leave';
  const stopListening = () => SIGNALS.forEach((signal) => process.off(signal, onSignal));
  // shutting the tools down (exec.shutdown(); a session's dispose leaves a toolset open) stops the signal handling
  const exec = execTools({ root, sandbox: mode, approvalPolicy, processScope: 'session', onShutdown: stopListening });
  function onSignal(signal: NodeJS.Signals) {
    const shutdown = exec.shutdown();
    if (reraise) void shutdown.finally(() => process.kill(process.pid, signal));
  }
  SIGNALS.forEach((signal) => process.on(signal, onSignal));
  return { tools: [clockTool(), contextRemainingTool(), applyPatchTool({ root }), ...exec], exec, sandbox: mode };
}

/**
 * Why the CLI must not start with `mode` (`undefined` when it can): the sandbox is started once in
 * `root`, and a missing piece is named. Only `--sandbox danger-full-access` runs without a sandbox.
 */
export async function sandboxRefusal(mode: SandboxMode, root: string): Promise<string | undefined> {
  const check = await checkSandbox({ mode, root });
  if (check.available) return undefined;
  const { missing, reason, remedy } = check.error;
  return `switchyard: the ${mode} sandbox cannot start (missing: ${missing}): ${reason}. Fix: ${remedy}, or pass --sandbox danger-full-access to run without a sandbox.\n`;
}
