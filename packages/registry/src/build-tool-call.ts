import {
  SwitchyardError,
  errorMessage,
  toolName,
  type JsonSchema,
  type JsonValue,
  type ResponseItem,
  type ToolCall,
  type ToolSearchPayload,
} from '@switchyard/protocol';
import { listFailures, schemaFailures } from './input-validation';

const TOOL_SEARCH_ARGUMENTS: JsonSchema = {
  type: 'object',
  // Only the shape: the tool_search handler owns the field rules ("limit must be greater than zero").
  properties: { query: { type: 'string' }, limit: { type: 'number' } },
  required: ['query'],
};

/**
 * A call as {@link buildToolCall} builds it: `malformed` carries the model-visible failure of a call
 * whose `tool_search` arguments could not be read ("failed to parse tool_search arguments: …"); the
 * dispatch answers it instead of running the tool.
 */
export interface BuiltToolCall extends ToolCall {
  readonly malformed?: string;
}

/** The model-visible failure a built call carries (see {@link BuiltToolCall}), or `undefined` for a well-formed call. */
export function malformedCallMessage(call: ToolCall): string | undefined {
  return (call as BuiltToolCall).malformed;
}

/**
 * Turns a wire item into a {@link ToolCall}: `function_call` → function payload,
 * `custom_tool_call` → custom payload, `tool_search_call` with `execution:"client"` → tool-search
 * payload. Anything else (server-side searches, messages, reasoning) is not a tool call: `undefined`.
 * Malformed `tool_search` arguments still give a call, which answers the parse failure when dispatched.
 * Throws a `FATAL` error only for a call item with neither `call_id` nor `id` (it cannot be answered).
 */
export function buildToolCall(item: ResponseItem): BuiltToolCall | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const record = item as Record<string, unknown>;
  switch (record.type) {
    case 'function_call': {
      const args = record.arguments;
      const text = typeof args === 'string' ? args : args === undefined || args === null ? '' : JSON.stringify(args);
      return {
        toolName: toolName(String(record.name ?? ''), optionalString(record.namespace)),
        callId: callIdOf(record),
        payload: { kind: 'function', arguments: text },
      };
    }
    case 'custom_tool_call':
      return {
        toolName: toolName(String(record.name ?? ''), optionalString(record.namespace)),
        callId: callIdOf(record),
        payload: { kind: 'custom', input: typeof record.input === 'string' ? record.input : String(record.input ?? '') },
      };
    case 'tool_search_call': {
      if (record.execution !== 'client') return undefined;
      const parsed = parseToolSearchArguments(record.arguments);
      const payload: ToolSearchPayload = { kind: 'tool-search', arguments: parsed.ok ? parsed.arguments : { query: '' } };
      const call: BuiltToolCall = { toolName: toolName('tool_search'), callId: callIdOf(record), payload };
      return parsed.ok ? call : { ...call, malformed: `failed to parse tool_search arguments: ${parsed.reason}` };
    }
    default:
      return undefined;
  }
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function callIdOf(record: Record<string, unknown>): string {
  if (typeof record.call_id === 'string' && record.call_id !== '') return record.call_id;
  if (typeof record.id === 'string' && record.id !== '') return record.id;
  throw new SwitchyardError('FATAL', `${String(record.type)} without call_id or id`);
}

type ParsedSearch = { ok: true; arguments: ToolSearchPayload['arguments'] } | { ok: false; reason: string };

function parseToolSearchArguments(raw: unknown): ParsedSearch {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch (error) {
      return { ok: false, reason: errorMessage(error) };
    }
  }
  const failures = schemaFailures(TOOL_SEARCH_ARGUMENTS, (value ?? null) as JsonValue);
  if (failures) return { ok: false, reason: listFailures(failures) };
  const { query, limit } = value as { query: string; limit?: number };
  return { ok: true, arguments: limit === undefined ? { query } : { query, limit } };
}
