// The `switchyard` command, callable in process: main(argv) resolves to the exit code.
export { main } from './cli';

export { VERSION } from './version';
