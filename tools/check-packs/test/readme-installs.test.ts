import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageReadmeInstallProblems, readmeInstallProblems } from '../src/readme-installs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe("package READMEs' install lines", () => {
  it('name every package their examples import, with npm', () => {
    expect(packageReadmeInstallProblems(repo)).toEqual({});
  });

  it('catch an example that imports a package no line installs, and a pnpm line', () => {
    const markdown = [
      '```sh',
      'pnpm add @switchyard/ai-sdk',
      'npm install @switchyard/session isolated-vm@6.2.0 # engine',
      '```',
      '```ts',
      "import { readFileSync } from 'node:fs';",
      "import { createSession } from '@switchyard/session';",
      "import { createScriptedModel } from '@switchyard/session/testing';",
      "import { z } from 'zod';",
      '```',
    ].join('\n');
    expect(readmeInstallProblems(markdown)).toEqual([
      "install line is not npm's: pnpm add @switchyard/ai-sdk",
      'an example imports zod, which no npm install line names',
    ]);
  });
});
