import { readFileSync, readdirSync } from 'node:fs';

/**
 * Process checks for tests and benches, read from /proc (Linux). Tests that look at processes
 * scope themselves to their own process tree (children of a pid they know) because other suites
 * run on the same machine at the same time.
 */

/** A process as /proc shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** One-letter state: R, S, D, Z (zombie), T, … */
  state: string;
  cmdline: string[];
}

/** Reads /proc/<pid>; undefined once the process is gone. */
export function processInfo(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name is in parentheses and may hold spaces: read what follows the last ')'
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { pid, ppid: Number(rest[1]), state: rest[0], cmdline };
  } catch {
    return undefined;
  }
}

/** True while the process runs (a zombie has ended: it only waits to be reaped). */
export function running(pid: number): boolean {
  const info = processInfo(pid);
  return info !== undefined && info.state !== 'Z';
}

/** The live children of `parent` (default: this process) that are Code Mode runtime workers (`…/worker.js` or `…/worker.ts`). */
export function workerChildren(parent = process.pid): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = processInfo(Number(entry));
    if (info && info.ppid === parent && info.state !== 'Z' && info.cmdline.some((part) => /[/\\]worker\.(ts|js)$/.test(part))) found.push(info.pid);
  }
  return found;
}

/** The live descendants of `pid` (default: this process): its children, theirs and so on, read from each thread's `/proc/<pid>/task/<tid>/children`. */
export function descendants(pid = process.pid): number[] {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const thread of threads) {
    let children: string;
    try {
      children = readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of children.split(' ').filter(Boolean).map(Number)) found.push(child, ...descendants(child));
  }
  return found;
}

/** A process's resident memory in MB (VmRSS), 0 once it is gone. */
export function residentMb(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** This process's peak resident memory in MB (VmHWM), NaN where /proc does not say. */
export function peakRssMb(): number {
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? Number.NaN) / 1024;
}

/** Live processes (zombies aside) other than this one whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const info = processInfo(Number(entry));
    if (info && info.state !== 'Z' && info.cmdline.join(' ').includes(marker)) found.push(info.pid);
  }
  return found;
}

/** A process's memory from /proc/<pid>/smaps_rollup in MB: resident, proportional (shared pages divided among their users) and unique. */
export interface MemoryRollup {
  rssMb: number;
  /** Proportional set size: what the process costs the machine, each shared page split among the processes that map it. */
  pssMb: number;
  /** Unique set size: pages no other process maps. */
  ussMb: number;
}

/** Reads /proc/<pid>/smaps_rollup (Linux 4.14+); undefined once the process is gone. */
export function memoryRollup(pid: number): MemoryRollup | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { rssMb: kb('Rss') / 1024, pssMb: kb('Pss') / 1024, ussMb: (kb('Private_Clean') + kb('Private_Dirty')) / 1024 };
}
