// Model clients
export { openaiResponses } from './openai-responses';
export type { OpenAIResponsesOptions } from './openai-responses';
export { chatCompletions } from './chat-completions';
export type { ChatCompletionsOptions } from './chat-completions';

// Command-line specs
export { modelFromSpec } from './model-from-spec';
export type { ModelFromSpecOptions, ModelEnvironment } from './model-from-spec';

// Retries and stream bounds
export type { RetryOptions } from './retry';
export type { StreamLimitOptions } from './stream-limits';

export { VERSION } from './version';
