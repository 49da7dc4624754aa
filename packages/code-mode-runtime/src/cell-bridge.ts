import type { CellMessage, ImageDetail } from './prelude/bridge';

const IMAGE_DETAILS: ReadonlySet<string> = new Set<ImageDetail>(['auto', 'low', 'high', 'original']);

/** A `calls` batch: a flat array of strings, `[id, tool, argumentsJson]` repeated. */
function isCallBatch(value: unknown): value is string[] {
  if (!Array.isArray(value) || value.length % 3 !== 0) return false;
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== 'string') return false;
  return true;
}

/**
 * The runtime's check of a message from a cell's isolate (the `post` callback's arguments): the
 * typed `CellMessage`, or undefined for anything malformed (dropped: the isolate runs untrusted
 * code and may have been subverted). Never throws.
 */
export function decodeCellMessage(kind: unknown, a: unknown, b: unknown, c: unknown): CellMessage | undefined {
  switch (kind) {
    case 'text':
    case 'notify':
      return typeof a === 'string' ? [kind, a] : undefined;
    case 'image':
      return typeof a === 'string' && /^data:/i.test(a) && typeof b === 'string' && IMAGE_DETAILS.has(b) ? ['image', a, b as ImageDetail] : undefined;
    case 'yield':
      return ['yield'];
    case 'calls':
      return isCallBatch(a) ? ['calls', a] : undefined;
    case 'set-timer':
      return typeof a === 'number' && typeof b === 'number' ? ['set-timer', a, b] : undefined;
    case 'clear-timer':
      return typeof a === 'number' ? ['clear-timer', a] : undefined;
    case 'write':
      return typeof a === 'string' && typeof b === 'string' ? ['write', a, b] : undefined;
    case 'done':
      return typeof b === 'string' && typeof c === 'number' ? ['done', a === 1 ? 1 : 0, b, c] : undefined;
    case 'synced':
      return typeof a === 'number' ? ['synced', a] : undefined;
    default:
      return undefined;
  }
}
