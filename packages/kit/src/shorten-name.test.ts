import { describe, expect, it } from 'vitest';
import { MAX_WIRE_NAME_LENGTH } from '@switchyard/protocol';
import { nameHash, shortenName } from './shorten-name';

describe('shortenName', () => {
  const long = `mcp__${'support_team_'.repeat(6)}__create_entities`;

  it('returns a name that fits unchanged and cuts a longer one to 64 with a stable hash', () => {
    expect(shortenName('clock__curr_time')).toBe('clock__curr_time');
    const short = shortenName(long);
    expect(short).toHaveLength(MAX_WIRE_NAME_LENGTH);
    expect(short).toBe(`${long.slice(0, 53)}_${nameHash(long)}`);
    expect(shortenName(long)).toBe(short);
    expect(nameHash(long)).toMatch(/^[0-9a-f]{10}$/);
  });

  it('keeps the end when asked, so a namespaced tool keeps its own name', () => {
    const short = shortenName(long, { keepEnd: 'create_entities'.length });
    expect(short).toHaveLength(64);
    expect(short).toMatch(/^mcp__support_team_support_team_suppor_[0-9a-f]{10}_create_entities$/);
  });

  it('gives long names with a common start different results, and hashOf resolves a clash', () => {
    const a = shortenName(`${long}_a`);
    const b = shortenName(`${long}_b`);
    expect(a).not.toBe(b);
    expect(a.slice(0, 53)).toBe(b.slice(0, 53));
    expect(shortenName(long, { hashOf: `${long}#2` })).not.toBe(shortenName(long));
    expect(shortenName('short', { hashOf: 'short#2' })).toMatch(/^short_[0-9a-f]{10}$/);
  });

  it('refuses a maximum too small for the hash', () => {
    expect(() => shortenName(long, { maxLength: 13 })).toThrow(RangeError);
  });
});
