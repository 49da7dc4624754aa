import { isToolUIPart, safeValidateUIMessages, type UIMessage } from 'ai';

/** An HTTP answer that is not a stream: the status and a plain-text message (what the AI SDK client shows as the error). */
export function textResponse(status: number, message: string): Response {
  return new Response(message, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' } });
}

/** What a chat request (`POST`, as `DefaultChatTransport` sends it) asks for. */
export type ChatRequestBody = { chatId?: string; trigger?: string; messages: UIMessage[] };

/** Reads and checks a chat request's body: a JSON object with a valid `messages` list, at most `maxBytes`. */
export async function readChatRequest(request: Request, maxBytes: number): Promise<ChatRequestBody | Response> {
  if (request.method !== 'POST') return textResponse(405, `a chat request is a POST; got ${request.method}`);
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\b/i.test(type)) return textResponse(415, `a chat request's body is JSON (content-type: application/json); got ${type === '' ? 'no content-type' : type}`);
  const text = await readBounded(request, maxBytes);
  if (typeof text !== 'string') return text;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return textResponse(400, `the request body is not JSON: ${(error as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return textResponse(400, 'the request body must be an object with `messages`');
  const { id, trigger, messages } = body as { id?: unknown; trigger?: unknown; messages?: unknown };
  if (!Array.isArray(messages) || messages.length === 0) return textResponse(400, '`messages` must be a non-empty list of UI messages');
  const validated = await safeValidateUIMessages({ messages });
  if (!validated.success) return textResponse(400, `invalid \`messages\`: ${validated.error.message}`);
  return { chatId: typeof id === 'string' ? id : undefined, trigger: typeof trigger === 'string' ? trigger : undefined, messages: validated.data };
}

async function readBounded(request: Request, maxBytes: number): Promise<string | Response> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge(maxBytes);
  if (!request.body) return '';
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    size += next.value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return tooLarge(maxBytes);
    }
    text += decoder.decode(next.value, { stream: true });
  }
  return text + decoder.decode();
}

function tooLarge(maxBytes: number): Response {
  return textResponse(413, `the request body is over ${maxBytes} bytes`);
}

/** The page's answers in the last assistant message: tool parts it answered and the server has not finished. */
export function approvalAnswers(message: UIMessage): Array<{ approvalId: string; toolCallId: string; approved: boolean; reason?: string }> {
  const answers: Array<{ approvalId: string; toolCallId: string; approved: boolean; reason?: string }> = [];
  for (const part of message.parts) {
    if (!isToolUIPart(part) || part.state !== 'approval-responded') continue;
    const { id, approved, reason } = part.approval;
    answers.push({ approvalId: id, toolCallId: part.toolCallId, approved, ...(reason !== undefined ? { reason } : {}) });
  }
  return answers;
}
