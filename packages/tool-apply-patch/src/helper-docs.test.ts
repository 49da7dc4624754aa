import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { README_FILE, currentHelperDocs, renderHelperDocs } from './helper-docs';

describe('the README table of the helper protocol', () => {
  it('is what the message table renders (after editing helper-messages.ts: pnpm --filter @switchyard/tool-apply-patch run docs:protocol)', () => {
    expect(currentHelperDocs(readFileSync(README_FILE, 'utf8'))).toBe(renderHelperDocs());
  });

  it('names every message of both directions with its fields', () => {
    const docs = renderHelperDocs();
    for (const t of ['apply', 'commit', 'abort', 'verified', 'committed', 'error']) expect(docs).toContain(`| \`${t}\` |`);
    expect(docs).toContain('| `apply` | `patch`: blob index, `root`: string, `allowOutsideRoot`: boolean, `protectedNames?`: string[], `limits?`: PatchLimits, `turn?`: Turn |');
    expect(docs).toContain('`before`: blob index \\| null');
  });
});
