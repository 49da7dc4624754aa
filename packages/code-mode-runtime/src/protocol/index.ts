/**
 * The runtime protocol: how a host (the agent's process) and a runtime (the isolate engine, in a
 * worker process today, on another machine later) speak. Transport-neutral: a transport carries
 * frames, each frame one JSON array of messages (followed by the raw texts of its blob fields, see
 * `connection.ts`); this module defines the messages, the version
 * handshake, validation of everything that arrives, and the framing over a duplex byte stream
 * (stdio pipes, a socket). A message bus that carries whole frames (NATS) implements
 * {@link RuntimeTransport} directly and reuses the rest.
 *
 * Rules:
 * - The host speaks first (`hello`); the runtime answers `hello` with its version, capabilities
 *   and limits, or `fatal` and closes. Versions must be equal.
 * - Every request (a message with an `id`) is answered by exactly one `reply` with that `id`;
 *   every `call` (a nested tool call from a cell) by exactly one `call-result`. A host request
 *   may be cancelled (`cancel`): it is still answered once (with `ABORTED` when the cancel won).
 * - A frame is at most the receiver's `maxFrameBytes` (announced in `hello`); a bigger frame, a
 *   frame that is not a JSON array, or a message that does not validate is a protocol violation
 *   and ends the connection. Senders split batches and stored values across frames; a single
 *   value too large to send fails its own operation, not the connection.
 * - Messages posted in the same tick travel in one frame (nested calls started together, the
 *   results that answer them).
 */

export * from './messages';
export * from './framing';
export * from './connection';
export * from './wire-error';
