import { spawn, type ChildProcess } from 'node:child_process';
import { access, readFile, readdir, stat } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The process side of the worker pool: how a worker is started, what /proc says about it, and how
 * its end is described. Nothing here blocks the host's event loop: the `setpriv` probe, the
 * worker-entry lookup and every /proc read are asynchronous (each runs once per process or off the
 * main thread), so a pool serving hundreds of sessions never stalls its host on a spawn or a read.
 */

/** What a worker is started with (see {@link startWorkerProcess}). */
export interface WorkerProcessOptions {
  /** The worker's `--max-old-space-size` (MB). */
  memoryMb: number;
  maxFrameBytes: number;
  /** Start through `setpriv --pdeathsig SIGKILL` when it is available (Linux). */
  deathSignal: boolean;
}

interface WorkerEntry {
  file: string;
  execArgv: string[];
  cwd: string;
}

let entry: Promise<WorkerEntry> | undefined;

/**
 * The worker entry: `dist/worker.js` beside the built package. Running from source (this
 * monorepo's tests), `src/worker.ts` through tsx, unless `dist/worker.js` is at least as new as
 * every source file (a fresh build starts in a fraction of tsx's time). Looked up once per process.
 */
function workerEntry(): Promise<WorkerEntry> {
  entry ??= (async () => {
    const here = fileURLToPath(import.meta.url);
    const folder = dirname(here);
    if (!here.endsWith('.ts')) return { file: join(folder, 'worker.js'), execArgv: [], cwd: folder };
    const root = dirname(folder);
    const built = join(root, 'dist', 'worker.js');
    try {
      const builtAt = (await stat(built)).mtimeMs;
      const times = await Promise.all((await readdir(folder)).map(async (name) => (await stat(join(folder, name))).mtimeMs));
      if (builtAt >= Math.max(...times)) return { file: built, execArgv: [], cwd: join(root, 'dist') };
    } catch {
      // no build: run the sources
    }
    return { file: join(folder, 'worker.ts'), execArgv: ['--conditions=@switchyard/source', '--import', 'tsx'], cwd: root };
  })();
  return entry;
}

let setpriv: Promise<string | undefined> | undefined;

/** `setpriv` when it is on PATH and supports `--pdeathsig` (util-linux ≥ 2.33), else undefined; probed once per process. */
function setprivPath(): Promise<string | undefined> {
  setpriv ??= (async () => {
    if (process.platform !== 'linux') return undefined;
    for (const folder of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
      if (!folder) continue;
      const candidate = join(folder, 'setpriv');
      if (!(await access(candidate).then(() => true, () => false))) continue;
      const works = await new Promise<boolean>((resolve) => {
        const probe = spawn(candidate, ['--pdeathsig', 'SIGKILL', '--', process.execPath, '-e', ''], { stdio: 'ignore', timeout: 10_000 });
        probe.once('error', () => resolve(false));
        probe.once('exit', (code) => resolve(code === 0));
      });
      return works ? candidate : undefined;
    }
    return undefined;
  })();
  return setpriv;
}

/**
 * Starts one worker process: `node --no-node-snapshot worker.js` (through `setpriv --pdeathsig
 * SIGKILL` where available) with an empty environment, since it runs untrusted code and needs none
 * of the host's secrets.
 */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<ChildProcess> {
  const [found, setprivCommand] = await Promise.all([workerEntry(), options.deathSignal ? setprivPath() : undefined]);
  const args = ['--no-node-snapshot', `--max-old-space-size=${options.memoryMb}`, ...found.execArgv, found.file, `--max-frame-bytes=${options.maxFrameBytes}`];
  const command = setprivCommand ?? process.execPath;
  const commandArgs = setprivCommand ? ['--pdeathsig', 'SIGKILL', '--', process.execPath, ...args] : args;
  return spawn(command, commandArgs, { cwd: found.cwd, env: {}, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
}

let procMounted: Promise<boolean> | undefined;
const hasProc = () =>
  (procMounted ??= process.platform === 'linux' ? access(`/proc/${process.pid}/stat`).then(() => true, () => false) : Promise.resolve(false));

/**
 * True when the process is known to be gone or a zombie (Linux /proc): killed a moment ago, its
 * exit not yet seen by this event loop. Such a worker is not handed to a session. Elsewhere: false.
 */
export async function processEnded(pid: number | undefined): Promise<boolean> {
  if (pid === undefined || !(await hasProc())) return false;
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  // "pid (comm) S …": the state follows the last ')' (comm may hold parentheses)
  const state = text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

/** Resident memory of a process in MB (`VmRSS` of /proc/<pid>/status, Linux); undefined where there is no /proc. */
export async function residentMb(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** "the runtime worker crashed with SIGTRAP (V8: Fatal JavaScript invalid size error 169220804)". */
export function describeExit(status: { code: number | null; signal: NodeJS.Signals | null }, stderr: string): string {
  const last = fatalLine(stderr);
  const detail = last ? ` (${last})` : '';
  if (status.signal === 'SIGKILL' || status.signal === 'SIGTERM' || status.signal === 'SIGINT') return `the runtime worker was killed by ${status.signal}${detail}`;
  if (status.signal) return `the runtime worker crashed with ${status.signal}${detail}`;
  return `the runtime worker exited with code ${status.code}${detail}`;
}

/** What a worker's stderr says killed it (V8's fatal error, a heap out-of-memory abort, an uncaught exception), shortened. */
function fatalLine(stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((line) => line.replace(/^#\s*/, '').trim())
    // V8's banner says where ("Fatal error in , line 0"); the next line says what
    .filter((line) => line && !/^Fatal error in .*, line \d+$/.test(line));
  const shorten = (line: string) => (line.length > 200 ? `${line.slice(0, 200)}…` : line);
  const fatal = lines.find((line) => /^Fatal /.test(line)) ?? lines.find((line) => /FATAL ERROR/.test(line));
  if (fatal) return shorten(fatal);
  if (/is_heap_oom = 1|heap out of memory/.test(stderr)) {
    const limit = /heap_size_limit = (\d+)/.exec(stderr);
    return `V8 ran out of heap memory${limit ? ` at a heap limit of ${Math.round(Number(limit[1]) / (1024 * 1024))} MB` : ''}`;
  }
  const error = lines.find((line) => /^\w*Error\b/.test(line));
  return error ? shorten(error) : undefined;
}

/** Resolves after `ms`; the timer keeps the event loop alive only when asked to. */
export const delay = (ms: number, keepAlive = false) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (!keepAlive) timer.unref?.();
  });
