import type { CellToolRequest } from '@switchyard/protocol';
import type { RuntimeMessage } from './protocol';

/**
 * A nested call's request carrying its arguments as the JSON text the cell produced: `input` is
 * decoded from `inputJson` only when a host reads it (once), so a host that takes the text (the
 * registry parses function arguments itself) never pays for a decode here. Reading `input` throws
 * the `SyntaxError` of a text that is not JSON (only a subverted cell or runtime sends one).
 */
export function cellToolRequest(fields: Omit<CellToolRequest, 'input' | 'inputJson'>, inputJson: string | undefined): CellToolRequest {
  let decoded = false;
  let input: CellToolRequest['input'];
  return {
    cellId: fields.cellId,
    runtimeToolCallId: fields.runtimeToolCallId,
    tool: fields.tool,
    signal: fields.signal,
    inputJson,
    get input() {
      if (!decoded) {
        input = inputJson === undefined ? undefined : JSON.parse(inputJson);
        decoded = true;
      }
      return input;
    },
  };
}

/**
 * The host's request for a runtime's `call` message: the arguments as the cell's JSON text
 * (decoded only if the host reads `input`), or, from a runtime that put them inline, the value it
 * sent. For hosts of the runtime protocol (the agent host, a runtime host relaying to it).
 */
export function callToolRequest(message: Extract<RuntimeMessage, { t: 'call' }>, signal: AbortSignal): CellToolRequest {
  const fields = { cellId: message.cellId, runtimeToolCallId: message.runtimeToolCallId, tool: message.tool, signal };
  if (message.inputJson === undefined && message.input !== undefined) return { ...fields, input: message.input };
  return cellToolRequest(fields, message.inputJson);
}
