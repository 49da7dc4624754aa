import { connectRuntime, createTransportEnding, serveRuntime, type RuntimePlacement, type RuntimeTransport } from '@switchyard/code-mode-runtime/protocol';

/** Which way a frame travels. */
export type Direction = 'to-runtime' | 'to-host';

/** What the link does to one frame. */
export type Fault = { kind: 'drop' } | { kind: 'delay'; ms: number } | { kind: 'duplicate' } | { kind: 'replay'; afterMs: number } | { kind: 'corrupt'; frame: string };

/** Decides the fault for the `index`-th frame (from 0) of a direction; undefined delivers it as sent. */
export type FaultPlan = (frame: string, direction: Direction, index: number) => Fault | undefined;

/** A plan that applies `fault` to the first frame `matches` accepts, on any link, and to no other. */
export function faultOnce(matches: (frame: string, direction: Direction) => boolean, fault: Fault): FaultPlan {
  let used = false;
  return (frame, direction) => {
    if (used || !matches(frame, direction)) return undefined;
    used = true;
    return fault;
  };
}

/** A frame as the link saw it, and what it did to it. */
export interface FrameRecord {
  direction: Direction;
  index: number;
  frame: string;
  fault?: Fault['kind'];
}

/**
 * Two ends of an in-memory runtime link that can drop, delay, duplicate and corrupt frames (the
 * faults of a real bus; a replay sends one again later). Delivery is asynchronous and in order per direction, as on a stream or a
 * NATS subject: a delayed frame holds back the frames sent after it. Closing either end closes both.
 */
export function createMemoryLink(plan: FaultPlan = () => undefined) {
  const endings = { 'to-runtime': createTransportEnding('memory-runtime'), 'to-host': createTransportEnding('memory-host') };
  const listeners: Record<Direction, (frame: string) => void> = { 'to-runtime': () => {}, 'to-host': () => {} };
  const counts: Record<Direction, number> = { 'to-runtime': 0, 'to-host': 0 };
  const due: Record<Direction, number> = { 'to-runtime': 0, 'to-host': 0 };
  const frames: FrameRecord[] = [];
  let closed = false;
  let finished = false;
  // As a stream does, frames already sent are delivered before the close is (a `fatal` before the end).
  const close = (reason?: string) => {
    if (closed) return;
    closed = true;
    setTimeout(() => {
      finished = true;
      endings['to-host'].finish(reason);
      endings['to-runtime'].finish(reason);
    }, Math.max(due['to-host'], due['to-runtime'], Date.now()) - Date.now() + 1);
  };
  // In order: one queue and one timer per direction. (A timer per frame is not enough: two timers
  // set in one turn of the event loop with different durations can fire in the wrong order, since
  // Node counts both from the loop's cached clock while `due` was computed from `Date.now()`.)
  const queues: Record<Direction, Array<{ at: number; frame: string }>> = { 'to-runtime': [], 'to-host': [] };
  const pump = (direction: Direction) => {
    const queue = queues[direction];
    while (queue.length > 0 && queue[0].at <= Date.now()) {
      const { frame } = queue.shift()!;
      if (!finished) listeners[direction](frame);
    }
    if (queue.length > 0) setTimeout(() => pump(direction), queue[0].at - Date.now());
  };
  const deliver = (direction: Direction, frame: string, delayMs: number) => {
    // never before the frame sent before it
    const at = Math.max(Date.now() + delayMs, due[direction]);
    due[direction] = at;
    queues[direction].push({ at, frame });
    if (queues[direction].length === 1) setTimeout(() => pump(direction), at - Date.now());
  };
  const send = (direction: Direction) => (frame: string) => {
    if (closed) return;
    const index = counts[direction]++;
    const fault = plan(frame, direction, index);
    frames.push({ direction, index, frame, fault: fault?.kind });
    if (fault?.kind === 'drop') return;
    if (fault?.kind === 'corrupt') return deliver(direction, fault.frame, 0);
    deliver(direction, frame, fault?.kind === 'delay' ? fault.ms : 0);
    if (fault?.kind === 'duplicate') deliver(direction, frame, 0);
    // A replay: the same frame again later, after the frames sent in between.
    if (fault?.kind === 'replay') setTimeout(() => !closed && deliver(direction, frame, 0), fault.afterMs);
  };
  // The host end sends to the runtime and hears the host-bound frames; the runtime end the reverse.
  const end = (sending: Direction, receiving: Direction): RuntimeTransport => ({
    send: send(sending),
    onFrame: (listener) => (listeners[receiving] = listener),
    onClose: endings[receiving].onClose,
    close: () => close(undefined),
  });
  return { host: end('to-runtime', 'to-host'), runtime: end('to-host', 'to-runtime'), frames, close };
}

/**
 * A placement whose every session gets its own in-memory link to `serveRuntime` in this process
 * (the engine runs isolates here: `--no-node-snapshot`). `links` lists the links made, in order.
 * A released lease keeps its link (a session may release with a reply still on its way, as the
 * worker pool keeps its workers); `close()` ends them all (the runtime's `onShutdown`).
 * `replyGraceMs`: the leases' `RuntimeLease.replyGraceMs` (default: the session's own default).
 */
export function memoryPlacement(plan?: FaultPlan, options: { replyGraceMs?: number } = {}) {
  const links: Array<ReturnType<typeof createMemoryLink>> = [];
  let sequence = 0;
  const placement: RuntimePlacement = {
    async acquire(sink) {
      const link = createMemoryLink(plan);
      links.push(link);
      serveRuntime({ transport: link.runtime });
      const client = await connectRuntime({ transport: link.host, onEvent: (message) => sink.onEvent(message), onLost: (cause) => sink.onLost(cause) });
      return { client, key: `m${++sequence}`, hold: () => () => {}, release: () => {}, replyGraceMs: options.replyGraceMs };
    },
  };
  return { placement, links, close: () => links.forEach((link) => link.close()) };
}
