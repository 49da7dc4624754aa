// Code Mode for a host: the exec and wait tools and the per-session service behind them.
export { createCodeMode } from './create-code-mode';
export type { CodeMode, CreateCodeModeOptions, RestoreSessionOptions } from './create-code-mode';
export { CODE_MODE_SERVICE_STATE_FORMAT } from './code-mode-service';
export type { CodeModeJournalUpdate, CodeModeState } from './code-mode-service';
export type { BrokerCellState } from './dispatch-broker';

export { VERSION } from './version';
