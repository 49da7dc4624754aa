import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A classic-BPF seccomp filter for bubblewrap's `--seccomp FD`: `socket(AF_UNIX, …)` fails with
 * EPERM (so a sandboxed command cannot `connect()` to a host Unix socket such as
 * `/var/run/docker.sock` or the D-Bus session bus), and so does `io_uring_setup` (io_uring's
 * `IORING_OP_SOCKET` would create sockets without passing the `socket` syscall filter). Everything
 * else is allowed. Architectures: x86_64 (plus x32 numbers), aarch64, and their 32-bit compat
 * modes i386 and arm; on i386 every `socketcall(SYS_SOCKET, …)` is refused, since its arguments
 * sit behind a pointer the filter cannot read. Other architectures pass unfiltered.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO_EPERM = 0x00050001;

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16; // little-endian: low 32 bits of args[0]

const AF_UNIX = 1;
const SYS_SOCKET = 1; // socketcall's call number for socket()
const IO_URING_SETUP = 425; // the same number on every architecture

const ARCHES: Array<{ arch: number; socket: number[]; socketcall?: number }> = [
  { arch: 0xc000003e, socket: [41, 0x40000000 + 41] }, // x86_64 (and x32)
  { arch: 0xc00000b7, socket: [198] }, // aarch64
  { arch: 0x40000003, socket: [359], socketcall: 102 }, // i386
  { arch: 0x40000028, socket: [281] }, // arm (EABI)
];

type Insn = { code: number; jt?: string; jf?: string; k: number; label?: string };

/** Assembles the program; jump targets are labels resolved to relative offsets. */
function assemble(program: Insn[]): Buffer {
  const where = new Map<string, number>();
  program.forEach((insn, index) => insn.label && where.set(insn.label, index));
  const out = Buffer.alloc(program.length * 8);
  program.forEach((insn, index) => {
    const offset = (label: string | undefined) => {
      if (label === undefined) return 0;
      const target = where.get(label);
      if (target === undefined || target <= index || target - index - 1 > 255) throw new Error(`bad seccomp jump to ${label}`);
      return target - index - 1;
    };
    out.writeUInt16LE(insn.code, index * 8);
    out.writeUInt8(offset(insn.jt), index * 8 + 2);
    out.writeUInt8(offset(insn.jf), index * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, index * 8 + 4);
  });
  return out;
}

/** The filter as the bytes of `struct sock_filter[]` (8 bytes per instruction, little-endian). */
export function unixSocketDenyFilter(): Buffer {
  const program: Insn[] = [{ code: BPF_LD_W_ABS, k: OFFSET_ARCH }];
  ARCHES.forEach((entry, index) => program.push({ code: BPF_JEQ_K, k: entry.arch, jt: `arch${index}`, jf: index === ARCHES.length - 1 ? 'allow' : undefined }));
  ARCHES.forEach((entry, index) => {
    program.push({ code: BPF_LD_W_ABS, k: OFFSET_NR, label: `arch${index}` });
    program.push({ code: BPF_JEQ_K, k: IO_URING_SETUP, jt: 'deny' });
    for (const nr of entry.socket) program.push({ code: BPF_JEQ_K, k: nr, jt: 'socket' });
    if (entry.socketcall !== undefined) program.push({ code: BPF_JEQ_K, k: entry.socketcall, jt: 'socketcall' });
    program.push({ code: BPF_JEQ_K, k: 0xffffffff, jt: 'allow', jf: 'allow' });
  });
  program.push(
    { code: BPF_LD_W_ABS, k: OFFSET_ARG0_LOW, label: 'socket' },
    { code: BPF_JEQ_K, k: AF_UNIX, jt: 'deny', jf: 'allow' },
    { code: BPF_LD_W_ABS, k: OFFSET_ARG0_LOW, label: 'socketcall' },
    { code: BPF_JEQ_K, k: SYS_SOCKET, jt: 'deny', jf: 'allow' },
    { code: BPF_RET_K, k: SECCOMP_RET_ALLOW, label: 'allow' },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO_EPERM, label: 'deny' },
  );
  return assemble(program);
}

let filterPath: string | undefined;

/**
 * The path of the compiled filter: written once per process into a fresh private directory under
 * the OS temp dir (rewritten if something removed it).
 */
export function seccompFilterPath(): string {
  if (filterPath && existsSync(filterPath)) return filterPath;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-seccomp-'));
  const path = join(dir, 'deny-unix-sockets.bpf');
  writeFileSync(path, unixSocketDenyFilter(), { mode: 0o400 });
  chmodSync(dir, 0o700);
  filterPath = path;
  return path;
}
