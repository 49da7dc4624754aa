import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';

// Scripted answers of the AI SDK's MockLanguageModelV4, one generation step each.

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** A step that calls tools: each `[toolCallId, toolName, input]`. */
export const toolCalls = (...calls: Array<[string, string, unknown]>): LanguageModelV4GenerateResult => ({
  content: calls.map(([toolCallId, toolName, input]) => ({ type: 'tool-call' as const, toolCallId, toolName, input: JSON.stringify(input) })),
  finishReason: { unified: 'tool-calls', raw: 'tool_use' },
  usage,
  warnings: [],
});

/** A step that ends with `text`. */
export const textStep = (text: string): LanguageModelV4GenerateResult => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] });
