import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { buildSeccompFilter, seccompFilterPath, seccompSupported } from './seccomp';

const words = (filter: Buffer) => Array.from({ length: filter.length / 8 }, (_, index) => filter.readUInt32LE(index * 8 + 4));
/** The constants compared by `jeq` instructions. */
const compared = (filter: Buffer) => Array.from({ length: filter.length / 8 }, (_, index) => index).filter((index) => filter.readUInt16LE(index * 8) === 0x15).map((index) => filter.readUInt32LE(index * 8 + 4));

describe('seccomp filter', () => {
  test('8-byte instructions: arch check first, ending in ALLOW, EPERM, ENOSYS and KILL_PROCESS', () => {
    const filter = buildSeccompFilter({ arch: 'x64' });
    expect(filter.length % 8).toBe(0);
    const count = filter.length / 8;
    expect(filter.readUInt16LE(0)).toBe(0x20); // ld arch
    expect(filter.readUInt32LE(4)).toBe(4);
    expect(filter.readUInt32LE(12)).toBe(0xc000003e);
    expect(words(filter).slice(count - 4)).toEqual([0x7fff0000, 0x00050001, 0x00050026, 0x80000000]);
  });

  test('x86_64 and aarch64 tables name mount, unshare, setns, ptrace, bpf, keyctl, perf_event_open, modules, kexec, clone3', () => {
    const x64 = words(buildSeccompFilter({ arch: 'x64' }));
    expect(x64).toEqual(expect.arrayContaining([165, 166, 155, 272, 308, 101, 321, 250, 298, 175, 313, 246, 320, 435, 0x7e020000, 0x40000000]));
    const arm = words(buildSeccompFilter({ arch: 'arm64' }));
    expect(arm).toEqual(expect.arrayContaining([0xc00000b7, 40, 39, 41, 97, 268, 117, 280, 219, 241, 105, 273, 104, 294, 435]));
  });

  test('socket families: only AF_INET/AF_INET6, plus NETLINK_ROUTE with network', () => {
    const closed = compared(buildSeccompFilter({ arch: 'x64' }));
    const open = compared(buildSeccompFilter({ arch: 'x64', network: true }));
    expect(closed).toEqual(expect.arrayContaining([2, 10]));
    expect(closed).not.toContain(16);
    expect(open).toContain(16);
  });

  test('other architectures have no filter (the sandbox refuses to start there)', () => {
    expect(seccompSupported('x64')).toBe(true);
    expect(seccompSupported('arm64')).toBe(true);
    expect(seccompSupported('ia32')).toBe(false);
    expect(() => buildSeccompFilter({ arch: 'ia32' })).toThrow('no seccomp filter for the ia32 architecture');
  });

  test('the filter file holds the program, one per option set', () => {
    expect(readFileSync(seccompFilterPath())).toEqual(buildSeccompFilter());
    expect(readFileSync(seccompFilterPath({ network: true }))).toEqual(buildSeccompFilter({ network: true }));
    expect(seccompFilterPath()).not.toBe(seccompFilterPath({ network: true }));
  });
});
