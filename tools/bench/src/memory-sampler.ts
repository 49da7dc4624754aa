/**
 * The peak PSS of a process and every process below it, sampled from a worker thread (this file,
 * loaded again as the worker) so that the sampling never stalls the measured process's event loop.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { descendants, memoryRollup } from '@switchyard/config/proc';

/** The peak seen: PSS in MB, of this many processes. */
export interface MemoryPeak {
  peakMb: number;
  processes: number;
}

interface SamplerData {
  memorySamplerOf: number;
  intervalMs: number;
}

/** Starts sampling this process's tree every `intervalMs`; `stop()` takes a last sample and answers the peak. */
export function memorySampler(intervalMs = 200): { stop(): Promise<MemoryPeak> } {
  const data: SamplerData = { memorySamplerOf: process.pid, intervalMs };
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('error', reject);
        worker.once('message', (peak: MemoryPeak) => {
          void worker.terminate();
          resolve(peak);
        });
        worker.postMessage('stop');
      }),
  };
}

function sampleUntilStopped({ memorySamplerOf: pid, intervalMs }: SamplerData): void {
  const peak: MemoryPeak = { peakMb: 0, processes: 0 };
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const tree = [pid, ...descendants(pid)];
    const mb = tree.reduce((sum, member) => sum + (memoryRollup(member)?.pssMb ?? 0), 0);
    if (mb > peak.peakMb) Object.assign(peak, { peakMb: mb, processes: tree.length });
  };
  const loop = () => {
    sample();
    timer = setTimeout(loop, intervalMs);
  };
  parentPort!.once('message', () => {
    clearTimeout(timer);
    sample();
    parentPort!.postMessage(peak);
  });
  loop();
}

if (!isMainThread && (workerData as Partial<SamplerData> | undefined)?.memorySamplerOf !== undefined) sampleUntilStopped(workerData as SamplerData);
