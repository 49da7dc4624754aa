import { ProtocolErrorCode, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';

/** The 2026-era revisions this server speaks. */
const MODERN_VERSIONS = ['2026-07-28'];
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** What the wire needs to know of the connection. */
export interface ConnectionWireOptions {
  /** Runs once when the transport closed, whoever closed it. */
  onClose: () => void;
  /** The family the connection settled on, once it did. */
  era: () => 'legacy' | 'modern' | undefined;
}

function claimedVersion(message: JSONRPCMessage): string | undefined {
  const meta = (message as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  const version = meta?.[PROTOCOL_VERSION_META_KEY];
  return typeof version === 'string' ? version : undefined;
}

/**
 * `transport` as the SDK's stdio entry sees it, with two additions: `onClose` runs once it closes,
 * and on a 2026-07-28 connection a request claiming another revision in its `_meta` is answered
 * with `UnsupportedProtocolVersionError` (-32022, listing the versions served and echoing the one
 * asked for), as the revision requires of every request. The SDK's entry checks the version of a
 * connection's first message only; later ones reach the pinned server whatever they claim.
 */
export function connectionWire(transport: Transport, options: ConnectionWireOptions): Transport {
  let closed = false;
  let onmessage: Transport['onmessage'];
  let onclose: Transport['onclose'];
  transport.onclose = () => {
    onclose?.();
    if (closed) return;
    closed = true;
    options.onClose();
  };
  transport.onmessage = (message, extra) => {
    const requested = 'method' in message && 'id' in message ? claimedVersion(message) : undefined;
    if (requested !== undefined && options.era() === 'modern' && !MODERN_VERSIONS.includes(requested)) {
      const error = { code: ProtocolErrorCode.UnsupportedProtocolVersion, message: `Unsupported protocol version: ${requested}`, data: { supported: MODERN_VERSIONS, requested } };
      void transport.send({ jsonrpc: '2.0', id: (message as { id: string | number }).id, error } as JSONRPCMessage).catch(() => undefined);
      return;
    }
    onmessage?.(message, extra);
  };
  return {
    start: () => transport.start(),
    send: (message, sendOptions) => transport.send(message, sendOptions),
    close: () => transport.close(),
    get onmessage() {
      return onmessage;
    },
    set onmessage(listener) {
      onmessage = listener;
    },
    get onclose() {
      return onclose;
    },
    set onclose(listener) {
      onclose = listener;
    },
    get onerror() {
      return transport.onerror;
    },
    set onerror(listener) {
      transport.onerror = listener;
    },
  };
}
