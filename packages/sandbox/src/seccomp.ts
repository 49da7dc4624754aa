import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The classic-BPF seccomp program bubblewrap installs (`--seccomp FD`) right before it runs the
 * command. Hand-assembled (a few dozen instructions) rather than taken from libseccomp, which has
 * no Node binding that ships without a compiler.
 *
 * - Only the host's native architecture may make system calls (x86_64 or aarch64); a process
 *   switching to another ABI (i386 or x32 on x86_64, arm32 on aarch64) is killed, since its
 *   system call numbers would slip past the rules below.
 * - EPERM for calls that change the sandbox or reach into the kernel: `mount`, `umount2`,
 *   `pivot_root`, `chroot`, the new mount API (`open_tree` … `mount_setattr`), `unshare`, `setns`,
 *   `clone` with any `CLONE_NEW*` flag, `ptrace`, `process_vm_readv/writev`, `pidfd_getfd`, `bpf`,
 *   `keyctl`/`add_key`/`request_key`, `perf_event_open`, `userfaultfd`, `fanotify_init`, kernel
 *   modules, `kexec_*`, `open_by_handle_at`, `reboot`, `swapon/off`, `acct`, `quotactl`, `syslog`,
 *   and io_uring (its `IORING_OP_SOCKET` would create sockets without the `socket` call).
 * - ENOSYS for `clone3`: its flags sit behind a pointer the filter cannot read, and C libraries
 *   fall back to `clone` (whose flags it can) when `clone3` is not implemented.
 * - `socket()` only for AF_INET and AF_INET6 (plus AF_NETLINK with protocol NETLINK_ROUTE when the
 *   sandbox has network, for interface and route lookups); AF_UNIX, AF_VSOCK, AF_NETLINK, AF_PACKET
 *   and every other family fail with EPERM. A private network namespace does not stop `connect()`
 *   to a Unix socket file such as `/var/run/docker.sock`; this does.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** Low 32 bits of `args[n]` (little-endian): `struct seccomp_data` puts args at offset 16. */
const argLow = (n: number) => 16 + n * 8;

const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const NETLINK_ROUTE = 0;
/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
const CLONE_NEW_MASK = 0x7e020000;
const X32_SYSCALL_BIT = 0x40000000;

interface ArchTable {
  arch: number;
  clone: number;
  clone3: number;
  socket: number;
  denied: number[];
  /** Numbers at or above this belong to another ABI (x32) and are refused. */
  foreignFrom?: number;
}

/** System calls denied with EPERM, by name, numbered per architecture below. */
const X86_64: ArchTable = {
  arch: 0xc000003e,
  clone: 56,
  clone3: 435,
  socket: 41,
  foreignFrom: X32_SYSCALL_BIT,
  // mount umount2 pivot_root chroot unshare setns ptrace process_vm_readv process_vm_writev bpf keyctl
  // add_key request_key perf_event_open init_module finit_module delete_module kexec_load kexec_file_load
  // open_by_handle_at userfaultfd io_uring_setup/enter/register open_tree move_mount fsopen fsconfig
  // fsmount fspick mount_setattr reboot swapon swapoff acct quotactl quotactl_fd lookup_dcookie syslog
  // pidfd_getfd fanotify_init uselib iopl ioperm _sysctl
  denied: [
    165, 166, 155, 161, 272, 308, 101, 310, 311, 321, 250, 248, 249, 298, 175, 313, 176, 246, 320, 304, 323, 425, 426, 427, 428, 429, 430,
    431, 432, 433, 442, 169, 167, 168, 163, 179, 443, 212, 103, 438, 300, 134, 172, 173, 156,
  ],
};

const AARCH64: ArchTable = {
  arch: 0xc00000b7,
  clone: 220,
  clone3: 435,
  socket: 198,
  // the same calls as on x86_64, in the generic numbering (aarch64 has no uselib, iopl, ioperm, _sysctl)
  denied: [
    40, 39, 41, 51, 97, 268, 117, 270, 271, 280, 219, 217, 218, 241, 105, 273, 106, 104, 294, 265, 282, 425, 426, 427, 428, 429, 430, 431,
    432, 433, 442, 142, 224, 225, 89, 60, 443, 18, 116, 438, 262,
  ],
};

const TABLES: Partial<Record<NodeJS.Architecture, ArchTable>> = { x64: X86_64, arm64: AARCH64 };

/** True when this host's architecture has a filter (the sandbox refuses to start otherwise). */
export function seccompSupported(arch: NodeJS.Architecture = process.arch): boolean {
  return TABLES[arch] !== undefined;
}

type Insn = { code: number; jt?: string; jf?: string; k: number; label?: string };

/** Assembles the program; jump targets are labels resolved to relative offsets (forward only). */
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

/** What the filter allows beyond the defaults. */
export interface SeccompOptions {
  /** Allow AF_NETLINK sockets with protocol NETLINK_ROUTE (the sandbox has network). Default false. */
  network?: boolean;
  /** The architecture to build for. Default: this process's. */
  arch?: NodeJS.Architecture;
}

/**
 * The filter as the bytes of `struct sock_filter[]` (8 bytes per instruction, little-endian).
 * Throws on an architecture without a table (see {@link seccompSupported}).
 */
export function buildSeccompFilter(options: SeccompOptions = {}): Buffer {
  const table = TABLES[options.arch ?? process.arch];
  if (!table) throw new Error(`no seccomp filter for the ${options.arch ?? process.arch} architecture`);
  const program: Insn[] = [
    { code: BPF_LD_W_ABS, k: OFFSET_ARCH },
    { code: BPF_JEQ_K, k: table.arch, jf: 'kill' },
    { code: BPF_LD_W_ABS, k: OFFSET_NR },
  ];
  if (table.foreignFrom !== undefined) program.push({ code: BPF_JGE_K, k: table.foreignFrom, jt: 'kill' });
  program.push(
    { code: BPF_JEQ_K, k: table.clone3, jt: 'enosys' },
    { code: BPF_JEQ_K, k: table.clone, jt: 'clone' },
    { code: BPF_JEQ_K, k: table.socket, jt: 'socket' },
  );
  for (const nr of table.denied) program.push({ code: BPF_JEQ_K, k: nr, jt: 'eperm' });
  program.push(
    { code: BPF_RET_K, k: SECCOMP_RET_ALLOW },
    // clone(flags, …): flags is the first argument on x86_64 and aarch64.
    { code: BPF_LD_W_ABS, k: argLow(0), label: 'clone' },
    { code: BPF_JSET_K, k: CLONE_NEW_MASK, jt: 'eperm' },
    { code: BPF_RET_K, k: SECCOMP_RET_ALLOW },
    // socket(family, type, protocol)
    { code: BPF_LD_W_ABS, k: argLow(0), label: 'socket' },
    { code: BPF_JEQ_K, k: AF_INET, jt: 'allow' },
    { code: BPF_JEQ_K, k: AF_INET6, jt: 'allow' },
  );
  if (options.network) {
    program.push(
      { code: BPF_JEQ_K, k: AF_NETLINK, jf: 'eperm' },
      { code: BPF_LD_W_ABS, k: argLow(2) },
      { code: BPF_JEQ_K, k: NETLINK_ROUTE, jt: 'allow', jf: 'eperm' },
    );
  } else {
    program.push({ code: BPF_JEQ_K, k: 0xffffffff, jt: 'eperm', jf: 'eperm' });
  }
  program.push(
    { code: BPF_RET_K, k: SECCOMP_RET_ALLOW, label: 'allow' },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO | EPERM, label: 'eperm' },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO | ENOSYS, label: 'enosys' },
    { code: BPF_RET_K, k: SECCOMP_RET_KILL_PROCESS, label: 'kill' },
  );
  return assemble(program);
}

let privateDir: string | undefined;

/**
 * A private directory of this process under the OS temp dir (mode 0711: only its owner lists it;
 * the root launcher's unprivileged sandbox user can traverse it to reach the staged workspace).
 * Recreated if something removed it. Synchronous: made once per process (an `access` per command
 * after that, to see it is still there).
 */
export function sandboxPrivateDir(): string {
  if (privateDir && existsSync(privateDir)) return privateDir;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-sandbox-'));
  chmodSync(dir, 0o711);
  mkdirSync(join(dir, 'stage'), { mode: 0o711 });
  privateDir = dir;
  filterPaths.clear();
  return dir;
}

const filterPaths = new Map<string, string>();

/**
 * The path of the compiled filter for these options, written once per process (mode 0400).
 * Synchronous: one small write per filter and process, an `access` per command after that.
 */
export function seccompFilterPath(options: SeccompOptions = {}): string {
  const name = `filter-${options.arch ?? process.arch}${options.network ? '-net' : ''}.bpf`;
  const dir = sandboxPrivateDir();
  const cached = filterPaths.get(name);
  if (cached && existsSync(cached)) return cached;
  const path = join(dir, name);
  writeFileSync(path, buildSeccompFilter(options), { mode: 0o400 });
  filterPaths.set(name, path);
  return path;
}
