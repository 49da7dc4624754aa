// Responses-API streams built from the official `openai` package's own types (what its stream
// tests and accumulators read), for the tests that replay them.
import type {
  Response as OpenAIResponse,
  ResponseFunctionToolCall,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStreamEvent,
  ResponseUsage,
} from 'openai/resources/responses/responses';

/** A stream event before it gets its `sequence_number`. */
type Unsequenced = ResponseStreamEvent extends infer Event ? (Event extends unknown ? Omit<Event, 'sequence_number'> : never) : never;

/** Server-sent events of the given events, ended by `[DONE]`. */
export const sse = (events: readonly object[]) => `${events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')}data: [DONE]\n\n`;

/** The same events as the newline-delimited JSON the SDK's `fromReadableStream` reads. */
export const ndjson = (events: readonly object[]) => new Response(events.map((event) => `${JSON.stringify(event)}\n`).join('')).body!;

/** A replay step serving `events` as an event stream. */
export const streamed = (events: readonly object[]) => ({ body: sse(events), headers: { 'content-type': 'text/event-stream' } });

/** A `Response` object with every required field, `in_progress` unless overridden. */
export function makeResponse(overrides: Partial<OpenAIResponse> = {}): OpenAIResponse {
  return {
    id: 'resp_sdk',
    access_programs: null,
    object: 'response',
    created_at: 0,
    model: 'gpt-5',
    output: [],
    output_text: '',
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: null,
    parallel_tool_calls: true,
    temperature: null,
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    status: 'in_progress',
    ...overrides,
  };
}

/** Usage with its details, as a reasoning model reports it. */
export function makeUsage(input: number, cached: number, output: number, reasoning: number): ResponseUsage {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
}

/**
 * One response of a reasoning model under `store: false`: a reasoning item with a summary and its
 * `encrypted_content`, then `answer` (a call, or a message with its text streamed as one delta), then `response.completed` with both and
 * the usage. `model` is the dated snapshot the server reports.
 */
export function reasoningResponse(
  id: string,
  answer: ResponseFunctionToolCall | ResponseOutputMessage,
  usage: ResponseUsage,
  model = 'gpt-5.1-codex-2025-11-13',
): { events: ResponseStreamEvent[]; reasoning: ResponseReasoningItem } {
  const reasoning: ResponseReasoningItem = {
    id: `rs_${id}`,
    type: 'reasoning',
    summary: [{ type: 'summary_text', text: 'Deciding what to answer.' }],
    encrypted_content: `gAAAAB-${id}`,
  };
  const response = (overrides: Partial<OpenAIResponse>) => makeResponse({ id, created_at: 1_764_450_200, model, ...overrides });
  const parts: Unsequenced[] = [
    { type: 'response.created', response: response({}) },
    { type: 'response.output_item.added', output_index: 0, item: { ...reasoning, summary: [] } },
    { type: 'response.output_item.done', output_index: 0, item: reasoning },
    { type: 'response.output_item.added', output_index: 1, item: { ...answer, status: 'in_progress' } as ResponseFunctionToolCall },
  ];
  if (answer.type === 'message') {
    for (const part of answer.content) {
      if (part.type === 'output_text') parts.push({ type: 'response.output_text.delta', item_id: answer.id, output_index: 1, content_index: 0, delta: part.text, logprobs: [] });
    }
  }
  parts.push(
    { type: 'response.output_item.done', output_index: 1, item: answer },
    { type: 'response.completed', response: response({ status: 'completed', output: [reasoning, answer], usage }) },
  );
  const events = parts.map((part, index) => ({ ...part, sequence_number: index }) as ResponseStreamEvent);
  return { events, reasoning };
}

/** An assistant message with one text part. */
export function assistantMessage(id: string, text: string): ResponseOutputMessage {
  return { id, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', annotations: [], text }] };
}
