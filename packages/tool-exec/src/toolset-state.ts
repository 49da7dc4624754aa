import { RespondToModelError } from '@switchyard/protocol';
import { SpawnerPool } from '@switchyard/sandbox';
import { DEFAULT_MAX_CONCURRENT_COMMANDS, SessionAdmission } from './admission';
import { ApprovalMemory } from './approval';
import type { ExecProcess } from './exec-process';
import type { ExecToolsOptions } from './exec-options';
import { DEFAULT_MAX_PROCESSES, ProcessTable } from './process-table';

/** What the two executors of one toolset share. */
export interface ToolsetState {
  readonly options: ExecToolsOptions;
  readonly table: ProcessTable;
  readonly memory: ApprovalMemory;
  /** Processes started by a call that has not answered yet (not in the table until then), with their session. */
  readonly inFlight: Map<ExecProcess, string>;
  readonly scope: 'turn' | 'session';
  readonly allowLoginShell: boolean;
  /** At most `maxConcurrentCommands` exec_command calls of one session run at once. */
  readonly admission: SessionAdmission;
  /** The long-lived spawners of unsandboxed commands, one per session. */
  readonly spawners: SpawnerPool;
  shuttingDown: boolean;
}

/** The shared state of a new toolset, its defaults filled in from the (already checked) options. */
export function createToolsetState(options: ExecToolsOptions): ToolsetState {
  return {
    options,
    table: new ProcessTable(options.maxProcesses ?? DEFAULT_MAX_PROCESSES),
    memory: new ApprovalMemory(),
    inFlight: new Map(),
    scope: options.processScope ?? 'turn',
    allowLoginShell: options.allowLoginShell ?? false,
    admission: new SessionAdmission(options.maxConcurrentCommands ?? DEFAULT_MAX_CONCURRENT_COMMANDS),
    spawners: new SpawnerPool(),
    shuttingDown: false,
  };
}

export function ensureOpen(state: ToolsetState): void {
  if (state.shuttingDown) throw new RespondToModelError('exec tools are shut down', { code: 'SHUTTING_DOWN' });
}
