// Model clients
export { openaiResponses, responsesRequestBody, toResponsesInputItem, DEFAULT_OPENAI_BASE_URL } from './openai-responses';
export type { OpenAIResponsesOptions } from './openai-responses';
export { chatCompletions, chatRequestBody } from './chat-completions';
export type { ChatCompletionsOptions } from './chat-completions';

// Chat Completions mapping
export { toChatTools, toChatMessages, defaultChatName, CUSTOM_TOOL_ARGUMENT } from './chat-conversion';
export type { ChatTool, ChatToolTarget, ChatMessage, ChatContentPart, ChatToolCall, ChatNameOf } from './chat-conversion';

// Command-line specs
export { modelFromSpec } from './model-from-spec';
export type { ModelFromSpecOptions, ModelEnvironment } from './model-from-spec';

// Retries
export { backoffDelay } from './retry';
export type { RetryOptions } from './retry';

export { VERSION } from './version';
