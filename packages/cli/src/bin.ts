#!/usr/bin/env -S node --no-node-snapshot
import { main } from './cli';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`switchyard: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
