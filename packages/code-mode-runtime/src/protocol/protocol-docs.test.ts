import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { README_FILE, currentProtocolDocs, renderProtocolDocs } from './protocol-docs';

describe('the README table of the runtime protocol', () => {
  it('is what the message table renders (after editing messages.ts: pnpm --filter @switchyard/code-mode-runtime run docs:protocol)', () => {
    const readme = readFileSync(README_FILE, 'utf8');
    expect(currentProtocolDocs(readme)).toBe(renderProtocolDocs());
  });

  it('names every message of both directions, its fields and the error codes', () => {
    const docs = renderProtocolDocs();
    for (const row of ['| `call` | `call`: integer ≥ 0, `session`: string, `cellId`: string, `runtimeToolCallId`: string, `tool`: string, `inputJson?`: string (blob), `input?`: JSON |', '| `reply` | `id`: integer ≥ 0<br>`ok: true`, `value?`: CellObservation<br>`ok: false`, `error`: WireError |']) {
      expect(docs).toContain(row);
    }
    expect(docs).toContain('`kind`: `function` \\| `freeform`');
    expect(docs).toMatch(/Error codes \(`WireError.code`\): `RESPOND_TO_MODEL`, .*`INTERNAL`, `INVALID_JOURNAL`, `BUSY`, `LEASE_HELD`, `STORE_CORRUPT`, `STORE_VERSION`, `STORE_FAILED`\./);
  });
});
