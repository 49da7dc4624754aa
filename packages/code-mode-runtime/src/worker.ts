/**
 * The entry of a runtime worker process: `node --no-node-snapshot worker.js --max-frame-bytes=N`,
 * started by the process runtime's pool. It serves the runtime protocol over its stdin / stdout
 * (stderr stays free for Node's and V8's own messages, which the host reads to name a crash) and
 * dies with its host: on stdin EOF (the host closed its pipe or died), when its parent pid changes
 * (the host died and the worker was re-parented), and, when the host started it through
 * `setpriv --pdeathsig SIGKILL`, by the kernel's signal even if this thread is stuck.
 */
import { loadIsolatedVm } from './isolated-vm';
import { DEFAULT_MAX_FRAME_BYTES, createStreamTransport } from './protocol';
import { serveRuntime } from './runtime-server';

const flag = process.argv.find((argument) => argument.startsWith('--max-frame-bytes='));
const maxFrameBytes = flag ? Number(flag.slice('--max-frame-bytes='.length)) : DEFAULT_MAX_FRAME_BYTES;
const parent = process.ppid;

// Loaded now, while the worker waits as the prewarmed spare, not when its first cell starts.
void loadIsolatedVm();

const transport = createStreamTransport({ readable: process.stdin, writable: process.stdout, maxFrameBytes });
serveRuntime({ transport, maxFrameBytes, onClosed: () => process.exit(0) });

// The host is gone when this process is re-parented (to init or a subreaper).
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 500).unref();
// A write to a host that is gone must end the worker, not crash it with an unhandled EPIPE.
process.stdout.on('error', () => process.exit(0));
