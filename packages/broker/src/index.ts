export { createCodeMode } from './create-code-mode';
export type { CodeMode, CreateCodeModeOptions } from './create-code-mode';

export { CodeModeService } from './code-mode-service';
export type { BrokerSession, CellEvent } from './code-mode-service';
export { DispatchBroker } from './dispatch-broker';
export type { NestedWorker } from './dispatch-broker';
export { createExecTool, createWaitTool } from './code-mode-tools';
export type { CodeModeToolOptions } from './code-mode-tools';

export { parseExecSource } from './pragma';
export type { ExecSource } from './pragma';
export { formatObservation, statusLine } from './response';
export type { FormatOptions } from './response';
export {
  EXEC_GRAMMAR,
  MCP_TYPES,
  WAIT_DESCRIPTION,
  WAIT_PARAMETERS,
  augmentedDescription,
  execDescription,
  nestedToolReference,
  toolDeclaration,
} from './description';

export { VERSION } from './version';
