import { readdirSync, readFileSync } from 'node:fs';

/**
 * Children of each pid, read from /proc (Linux); empty elsewhere. Synchronous on purpose: it runs
 * on an explicit kill only (never per command start or exit), /proc is served from memory, and the
 * host's `exit` handler — which cannot wait — needs it too.
 */
function childrenByParent(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return map;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const parent = Number(fields[1]);
      const list = map.get(parent) ?? [];
      list.push(Number(entry));
      map.set(parent, list);
    } catch {
      // the process ended while we were reading
    }
  }
  return map;
}

/**
 * SIGKILLs `pid`'s process group and every descendant found in /proc (including ones that called
 * `setsid`). A sandboxed command's descendants also die with its PID namespace, an unsandboxed one's
 * with the reaper; this is the host-side sweep for both. Never throws.
 */
export function killProcessTree(pid: number): void {
  const children = childrenByParent();
  const all: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    for (const child of children.get(next) ?? []) {
      all.push(child);
      queue.push(child);
    }
  }
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // group already gone
  }
  for (const target of [pid, ...all]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
