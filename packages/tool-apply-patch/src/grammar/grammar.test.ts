import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GRAMMAR_MODULE } from './build-grammar';
import { APPLY_PATCH_GRAMMAR } from './apply-patch.generated';

describe('the bundled apply_patch grammar', () => {
  it('is the bundle of the current .lark file (run `build:grammar` after editing it)', () => {
    expect(readFileSync(GRAMMAR_MODULE.file, 'utf8')).toBe(GRAMMAR_MODULE.fresh());
  });

  it('carries the .lark file byte for byte', () => {
    expect(APPLY_PATCH_GRAMMAR).toBe(readFileSync(new URL('./apply-patch.lark', import.meta.url), 'utf8'));
    expect(APPLY_PATCH_GRAMMAR.endsWith('%import common.LF\n')).toBe(true);
  });
});
