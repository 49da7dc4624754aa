// The exec_command and write_stdin tools, with their process hygiene.
export { execTools } from './exec-tools';
export type { ExecTools, ExecToolsOptions } from './exec-tools';

// What a Code Mode cell receives from exec_command / write_stdin.
export type { ExecCodeModeResult } from './exec-output';

export { VERSION } from './version';
