import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, ErrorCode, McpError, type ElicitRequestParams, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '@switchyard/protocol';
import type { ElicitationGate } from './elicitation-gate';

/** A server asks the user for input (`elicitation/create`), usually while one of its tools runs. */
export interface McpElicitationRequest {
  /** The configured server name. */
  readonly server: string;
  /** `form`: answer `content` matching `requestedSchema`; `url`: send the user to `url`. */
  readonly mode: 'form' | 'url';
  /** The server's message for the user (third-party text: show it as the server's). */
  readonly message: string;
  /** For `form`: a flat JSON Schema object of primitive properties. */
  readonly requestedSchema?: Record<string, unknown>;
  /** For `url`: the URL to open. */
  readonly url?: string;
  /** For `url`: the server's id of this elicitation. */
  readonly elicitationId?: string;
  /** Aborts when the server cancels the request or the connection closes. */
  readonly signal: AbortSignal;
}

/** The user's answer: `accept` (with `content` for a form), `decline` or `cancel`. */
export interface McpElicitationResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
}

/** The host's elicitation handler, the `onElicitation` option of `mcpTools`. */
export type McpElicitationHandler = (request: McpElicitationRequest) => Promise<McpElicitationResult>;

const ACTIONS = new Set(['accept', 'decline', 'cancel']);

/**
 * Answers `elicitation/create` on `client`. With a host handler the request goes to the host (a
 * handler that throws or answers nonsense declines, and `onProblem` hears why); without one the
 * client declares no elicitation capability, and a server that asks anyway is declined (a
 * `decline` result, not -32601), so its tool can go on without the input. `gate` declines what a
 * server may not ask for before the host hears of it.
 */
export function answerElicitations(
  client: Client,
  server: string,
  handler: McpElicitationHandler | undefined,
  onProblem: (message: string) => void,
  gate: ElicitationGate,
): void {
  if (!handler) {
    client.fallbackRequestHandler = async (request) => {
      if (request.method === 'elicitation/create') return { action: 'decline' };
      throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    };
    return;
  }
  client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<ElicitResult> => {
    const params: ElicitRequestParams = request.params;
    const admitted = gate.admit(params);
    if ('refused' in admitted) return { action: 'decline' };
    const form = params.mode !== 'url';
    try {
      const answer = await handler({
        server,
        mode: form ? 'form' : 'url',
        message: params.message,
        ...(form ? { requestedSchema: (params as { requestedSchema: Record<string, unknown> }).requestedSchema } : {}),
        ...(!form ? { url: (params as { url: string }).url, elicitationId: (params as { elicitationId: string }).elicitationId } : {}),
        signal: extra.signal,
      });
      if (typeof answer !== 'object' || answer === null || !ACTIONS.has(answer.action)) {
        onProblem(`onElicitation answered ${JSON.stringify(answer)}, not { action: "accept" | "decline" | "cancel" }; declined`);
        return { action: 'decline' };
      }
      if (answer.action !== 'accept') return { action: answer.action };
      return answer.content !== undefined && form ? { action: 'accept', content: answer.content } : { action: 'accept' };
    } catch (error) {
      if (extra.signal.aborted) return { action: 'cancel' };
      onProblem(`onElicitation threw: ${errorMessage(error)}; declined`);
      return { action: 'decline' };
    } finally {
      admitted.done();
    }
  });
}

/** The client capabilities to declare: elicitation (form, with defaults applied, and URL) only with a handler. */
export function elicitationCapabilities(handler: McpElicitationHandler | undefined): { elicitation?: { form: { applyDefaults: boolean }; url: Record<string, never> } } {
  return handler ? { elicitation: { form: { applyDefaults: true }, url: {} } } : {};
}
