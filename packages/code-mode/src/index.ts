// Code Mode for a host: the exec and wait tools and the per-session service behind them.
export { createCodeMode } from './create-code-mode';
export type { CodeMode, CreateCodeModeOptions } from './create-code-mode';

export { VERSION } from './version';
