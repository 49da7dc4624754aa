import { ModelRequestError, type ModelCapabilities, type ModelClient, type ModelRequest, type ModelStreamEvent, type ModelUsage, type ResponseItem } from '@switchyard/protocol';
import { approxTokenCount } from '@switchyard/kit';
import { assistantText } from '../message-text';

/** One scripted response: the items to emit, an error to throw (e.g. a retryable one), or a function of the request. */
export type ScriptedResponse =
  | readonly ResponseItem[]
  | Error
  | ((request: ModelRequest, index: number) => readonly ResponseItem[] | Error | Promise<readonly ResponseItem[] | Error>);

export interface ScriptedModelOptions {
  capabilities?: ModelCapabilities;
  /** Usage reported per response; default: the input's estimated tokens plus the output's. */
  usage?: (request: ModelRequest, items: readonly ResponseItem[]) => ModelUsage;
  /** Delay between emitted items in ms (to show tools starting while the model still streams). Default 0. */
  itemDelayMs?: number;
  /**
   * Stream an assistant message's text as `text-delta` events (one per word) before its item, as a
   * real client does. Default false.
   */
  textDeltas?: boolean;
}

/** A deterministic `ModelClient` for tests and demos; `requests` records every request it received. */
export interface ScriptedModel extends ModelClient {
  readonly requests: ModelRequest[];
}

/**
 * Creates a scripted model: a list of responses (one per sampling request, in order) or one
 * function of the request. When the list runs out, the request fails with a non-retryable error
 * naming the response number.
 */
export function createScriptedModel(script: readonly ScriptedResponse[] | ScriptedResponse, options: ScriptedModelOptions = {}): ScriptedModel {
  const requests: ModelRequest[] = [];
  const responses = Array.isArray(script) ? (script as readonly ScriptedResponse[]) : undefined;
  const single = Array.isArray(script) ? undefined : (script as ScriptedResponse);
  return {
    capabilities: options.capabilities,
    requests,
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      const index = requests.length;
      requests.push(request);
      const entry = responses ? responses[index] : single;
      if (entry === undefined) throw new ModelRequestError(`scripted model has no response #${index + 1}`, { retryable: false });
      const resolved = typeof entry === 'function' ? await entry(request, index) : entry;
      if (resolved instanceof Error) throw resolved;
      for (const item of resolved) {
        if (request.signal.aborted) throw new ModelRequestError('request aborted', { retryable: false, cause: request.signal.reason });
        if (options.itemDelayMs) await new Promise((resolve) => setTimeout(resolve, options.itemDelayMs));
        const text = assistantText(item);
        if (options.textDeltas && text !== undefined) {
          for (const delta of text.match(/\S+\s*|\s+/g) ?? []) yield { type: 'text-delta', delta };
        }
        yield { type: 'output-item', item };
      }
      const usage = options.usage?.(request, resolved) ?? {
        inputTokens: approxTokenCount(JSON.stringify(request.input)),
        outputTokens: approxTokenCount(JSON.stringify(resolved)),
        totalTokens: approxTokenCount(JSON.stringify(request.input)) + approxTokenCount(JSON.stringify(resolved)),
      };
      yield { type: 'completed', usage };
    },
  };
}
