// Temporary measurement (not committed): RSS of a runtime host and of its workers with N sessions each holding a yielded cell.
import { readFileSync, readdirSync } from 'node:fs';
import { createNatsRuntime, serveRuntimeOverNats } from '@switchyard/code-mode-nats';
import { startNatsServer } from '../../config/nats-server.ts';

const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const descendants = (pid: number): number[] => {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let children = '';
    try { children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8'); } catch { continue; }
    for (const child of children.trim().split(/\s+/).filter(Boolean).map(Number)) out.push(child, ...descendants(child));
  }
  return out;
};
const server = await startNatsServer();
const sessions = Number(process.argv[2] ?? 6);
const host = await serveRuntimeOverNats({ servers: server.url, name: 'm', workers: { max: sessions + 1 } });
const runtime = createNatsRuntime({ servers: server.url });
const base = rss(process.pid);
for (let i = 0; i < sessions; i++) {
  const session = runtime.openSession({ invokeTool: async () => 1, notify: () => {}, cellClosed: () => {} });
  const { observation } = await session.createCell({ source: `text('s${i}'); yield_control(); await new Promise((r) => setTimeout(r, 600000))`, tools: [], yieldTimeMs: 10_000 });
  if (observation.kind !== 'yielded') throw new Error(JSON.stringify(observation));
}
await new Promise((r) => setTimeout(r, 3000));
const workers = descendants(process.pid).filter((pid) => { try { return /node/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker'); } catch { return false; } });
const sizes = workers.map(rss).sort((a, b) => a - b);
console.log(JSON.stringify({ sessions, hostProcessMb: Math.round(rss(process.pid)), baseMb: Math.round(base), workers: sizes.length, workerMb: sizes.map(Math.round), stats: host.stats() }));
await runtime.shutdown();
await host.close();
await server.stop();
process.exit(0);
