import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { SandboxMode, ToolExecutor } from '@switchyard/protocol';
import { clockTool } from '@switchyard/tool-clock';
import { contextRemainingTool } from '@switchyard/tool-context-remaining';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { execTools, type ExecTools } from '@switchyard/tool-exec';

/** True when bubblewrap is on PATH (the sandboxed modes need it). */
export function hasBubblewrap(): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, 'bwrap')));
}

export interface Builtins {
  tools: ToolExecutor[];
  exec: ExecTools;
  sandbox: SandboxMode;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The four built-ins for a workspace; sandboxed with bubblewrap when it is there. Until
 * `exec.shutdown()`, SIGINT / SIGTERM / SIGHUP first kill every process the tools started (an
 * unsandboxed command is in its own process group and would outlive the CLI), then end the CLI
 * with the same signal.
 */
export function builtinTools(root: string, sandbox?: SandboxMode): Builtins {
  const mode: SandboxMode = sandbox ?? (hasBubblewrap() ? 'workspace-write' : 'danger-full-access');
  const exec = execTools({ root, sandbox: mode, approvalPolicy: 'never', processScope: 'session' });
  const stopListening = () => SIGNALS.forEach((signal) => process.off(signal, onSignal));
  function onSignal(signal: NodeJS.Signals) {
    stopListening();
    void exec.shutdown().finally(() => process.kill(process.pid, signal));
  }
  SIGNALS.forEach((signal) => process.on(signal, onSignal));
  const shutdown = exec.shutdown;
  exec.shutdown = async () => {
    stopListening();
    await shutdown();
  };
  return { tools: [clockTool(), contextRemainingTool(), applyPatchTool({ root }), ...exec], exec, sandbox: mode };
}
