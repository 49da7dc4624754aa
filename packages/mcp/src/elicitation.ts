import { ProtocolError, ProtocolErrorCode, type Client, type ElicitRequestParams, type ElicitResult } from '@modelcontextprotocol/client';
import { errorMessage } from '@switchyard/protocol';
import type { ElicitationPause } from './call-timer';
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

/** Answers one elicitation (its `elicitation/create` params) for the user; never rejects. */
export type ElicitationAnswerer = (params: ElicitRequestParams, signal: AbortSignal) => Promise<ElicitResult>;

/**
 * The answerer of one server's elicitations: the host's handler, with its answer checked (a
 * handler that throws or answers nonsense declines, and `onProblem` hears why; a cancelled request
 * answers `cancel`). `gate` declines what a server may not ask for before the host hears of it;
 * while an admitted one waits for the host, the server's calls stop counting time (`pause`).
 */
export function createElicitationAnswerer(
  server: string,
  handler: McpElicitationHandler,
  onProblem: (message: string) => void,
  pause: ElicitationPause,
  gate: ElicitationGate,
): ElicitationAnswerer {
  return async (params, signal) => {
    const admitted = gate.admit(params);
    if ('refused' in admitted) return { action: 'decline' };
    const form = params.mode !== 'url';
    const end = pause.begin();
    try {
      const answer = await handler({
        server,
        mode: form ? 'form' : 'url',
        message: params.message,
        ...(form ? { requestedSchema: (params as { requestedSchema: Record<string, unknown> }).requestedSchema } : {}),
        ...(!form ? { url: (params as { url: string }).url } : {}),
        ...(!form && typeof (params as { elicitationId?: unknown }).elicitationId === 'string' ? { elicitationId: (params as { elicitationId: string }).elicitationId } : {}),
        signal,
      });
      if (typeof answer !== 'object' || answer === null || !ACTIONS.has(answer.action)) {
        onProblem(`onElicitation answered ${JSON.stringify(answer)}, not { action: "accept" | "decline" | "cancel" }; declined`);
        return { action: 'decline' };
      }
      if (answer.action !== 'accept') return { action: answer.action };
      return answer.content !== undefined && form ? { action: 'accept', content: answer.content } : { action: 'accept' };
    } catch (error) {
      if (signal.aborted) return { action: 'cancel' };
      onProblem(`onElicitation threw: ${errorMessage(error)}; declined`);
      return { action: 'decline' };
    } finally {
      end();
      admitted.done();
    }
  };
}

/**
 * Answers `elicitation/create` on `client` (a 2025-11-25 request, or an `input_required` round of
 * 2026-07-28, which the SDK fulfils through the same handler). With an answerer the request goes to
 * the host; without one the client declares no elicitation capability, and a server that asks
 * anyway is declined (a `decline` result, not -32601), so its tool can go on without the input.
 */
export function answerElicitations(client: Client, answerer: ElicitationAnswerer | undefined): void {
  if (!answerer) {
    client.fallbackRequestHandler = async (request) => {
      if (request.method === 'elicitation/create') return { action: 'decline' };
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
    };
    return;
  }
  client.setRequestHandler('elicitation/create', (request, ctx) => answerer(request.params, ctx.mcpReq.signal));
}

/** The client capabilities to declare: elicitation (form, with defaults applied, and URL) only with a handler. */
export function elicitationCapabilities(handler: McpElicitationHandler | undefined): { elicitation?: { form: { applyDefaults: boolean }; url: Record<string, never> } } {
  return handler ? { elicitation: { form: { applyDefaults: true }, url: {} } } : {};
}
