import { resolve } from 'node:path';
import { toolName, type SandboxMode, type ToolExecutor } from '@switchyard/protocol';
import { checkOptions, serdeArgumentsParser } from '@switchyard/kit/internal';
import { checkSandbox } from '@switchyard/sandbox';
import { ExecCall } from './exec-call';
import { EXEC_OPTION_RULES, resolveShell, resolveWorkdir, sandboxPolicy, type ExecToolsOptions } from './exec-options';
import { EXEC_COMMAND_TYPES, WRITE_STDIN_TYPES, execCommandSpec, writeStdinSpec } from './exec-specs';
import { execCommandHookAdapter, writeStdinHookAdapter, type ExecHookContext } from './hook-adapters';
import { disposeFromSession, endSessionOf, endTurnOf, runningWorkOf, shutdownToolset } from './process-hygiene';
import { createToolsetState, type ToolsetState } from './toolset-state';
import { handleWriteStdin } from './write-stdin';

export type { ExecToolsOptions } from './exec-options';

/** The two executors plus process hygiene. */
export interface ExecToolset {
  /** `[exec_command, write_stdin]`. */
  readonly tools: [ToolExecutor, ToolExecutor];
  /** Kills every process started in `turnId` (no-op with `processScope: 'session'`). */
  endTurn(turnId: string): Promise<void>;
  /** Kills every process of the session `sessionId` (its calls' `step.sessionId`); the toolset stays open for other sessions. */
  endSession(sessionId: string): Promise<void>;
  /** Kills every process and refuses further calls. Idempotent. */
  shutdown(): Promise<void>;
  /** Ids of the processes still reachable with write_stdin (of one session when `sessionId` is given). */
  liveSessionIds(sessionId?: string): number[];
}

/** `[exec_command, write_stdin]` as a spreadable array that also carries the toolset's hygiene methods. */
export type ExecTools = ToolExecutor[] & Omit<ExecToolset, 'tools'>;

/** What the hook adapters read of the toolset: how a call would run, what a session runs. */
function hookContextOf(state: ToolsetState): ExecHookContext {
  return {
    resolve: (invocation, args) => ({
      workdir: resolveWorkdir(resolve(state.options.root ?? invocation.step.cwd), typeof args.workdir === 'string' ? args.workdir : undefined),
      shell: resolveShell(state.options, typeof args.shell === 'string' ? args.shell : undefined),
    }),
    sessionCommand: (id, invocation) => state.table.get(id, invocation.step.sessionId)?.command,
    sessionLine: (id, invocation) => state.table.get(id, invocation.step.sessionId)?.typed,
  };
}

/**
 * What the session hears at creation: a sandboxed mode this machine cannot enforce (no bubblewrap,
 * no user namespaces, not Linux — every macOS host) refuses every command, and only the model
 * would be told; the host hears it before the first call.
 */
async function checkSetupOf(options: ExecToolsOptions, context: { cwd: string; sandboxMode?: SandboxMode }): Promise<readonly string[]> {
  const mode = options.sandbox ?? context.sandboxMode ?? 'workspace-write';
  if (mode === 'danger-full-access') return [];
  try {
    const check = await checkSandbox(sandboxPolicy(options, resolve(options.root ?? context.cwd), mode));
    if (check.available) return [];
    return [`exec_command cannot run commands in the "${mode}" sandbox on this machine, so it will refuse every command: ${check.error.message} (sandbox: 'danger-full-access' runs them unsandboxed)`];
  } catch (error) {
    return [`exec_command could not check its sandbox: ${(error as Error).message}`];
  }
}

/**
 * Creates the `exec_command` and `write_stdin` executors sharing one process
 * table, plus `endTurn` / `shutdown` to kill process groups. Commands run through the sandbox and
 * approval policy of the options, else of the calling step (see {@link ExecToolsOptions}).
 */
export function createExecToolset(options: ExecToolsOptions = {}): ExecToolset {
  checkOptions('execTools', options, EXEC_OPTION_RULES);
  const state = createToolsetState(options);
  const hookContext = hookContextOf(state);
  const execCommand: ToolExecutor = {
    name: toolName('exec_command'),
    spec: execCommandSpec({ allowLoginShell: state.allowLoginShell, background: options.background }),
    supportsParallelToolCalls: true,
    abortStyle: 'shell',
    hookPayload: execCommandHookAdapter(hookContext),
    // Read as the reference reads them (serde): its error texts, unknown properties ignored — an
    // unoffered `login` among them (the handler reads only what the spec declares).
    parseArguments: serdeArgumentsParser({ name: 'ExecCommandArgs', schema: execCommandSpec({ allowLoginShell: state.allowLoginShell }).parameters, types: EXEC_COMMAND_TYPES }),
    handle: (invocation) => ExecCall.handle(state, invocation),
    checkSetup: (context) => checkSetupOf(options, context),
  };
  const writeStdin: ToolExecutor = {
    name: toolName('write_stdin'),
    spec: writeStdinSpec(),
    supportsParallelToolCalls: false,
    abortStyle: 'shell',
    hookPayload: writeStdinHookAdapter(hookContext),
    parseArguments: serdeArgumentsParser({ name: 'WriteStdinArgs', schema: writeStdinSpec().parameters, types: WRITE_STDIN_TYPES }),
    handle: (invocation) => handleWriteStdin(state, invocation),
  };
  const endTurn = (turnId: string) => endTurnOf(state, turnId);
  const shutdown = () => shutdownToolset(state);
  const lifecycle = { onTurnEnd: endTurn, dispose: (context?: unknown) => disposeFromSession(state, context), runningWork: (context: { sessionId: string }) => runningWorkOf(state, context.sessionId) };
  return {
    // The session calls onTurnEnd / dispose (each shared function once): turn-scoped processes need
    // no wiring; a toolset shared by several sessions stays open until the host's shutdown().
    tools: [{ ...execCommand, ...lifecycle }, { ...writeStdin, ...lifecycle }],
    endTurn,
    endSession: (sessionId) => endSessionOf(state, sessionId),
    shutdown,
    liveSessionIds: (sessionId) => state.table.ids(sessionId),
  };
}

/**
 * `[exec_command, write_stdin]` for a host's tool list (`tools: [...execTools(options)]`), with
 * `endTurn(turnId)`, `shutdown()` and `liveSessionIds()` attached to the array.
 */
export function execTools(options: ExecToolsOptions = {}): ExecTools {
  const toolset = createExecToolset(options);
  const list = [...toolset.tools] as ExecTools;
  list.endTurn = toolset.endTurn;
  list.endSession = toolset.endSession;
  list.shutdown = toolset.shutdown;
  list.liveSessionIds = toolset.liveSessionIds;
  return list;
}
