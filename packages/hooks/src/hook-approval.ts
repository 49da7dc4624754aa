import { isJsonObject, type ApprovalProvider, type PreToolUseRequest } from '@switchyard/protocol';
import type { PreHandlerDecision } from './hook-output';

/** The block reason when a hook asked without a reason and the answer was no. */
export const ASK_DENIED_REASON = 'PreToolUse hook asked for approval and it was denied';

/**
 * Resolves a PreToolUse `permissionDecision:"ask"` (beyond the reference): with an approval provider
 * (the engine's, else the step's) approved → continue, denied, a throw or a cancelled call → block
 * with the hook's reason; without one it fails open as the reference does. Never throws.
 */
export async function resolveAsk(
  request: PreToolUseRequest,
  decision: PreHandlerDecision,
  approvals: ApprovalProvider | undefined,
): Promise<PreHandlerDecision> {
  const provider = approvals ?? request.step.approvals;
  if (!provider) return { ...decision, status: 'failed', error: 'PreToolUse hook returned unsupported permissionDecision:ask' };
  const input = request.toolInput;
  const command = isJsonObject(input) && typeof input.command === 'string' ? input.command : undefined;
  let answer: string;
  try {
    answer = await provider.requestApproval({
      kind: 'hook',
      toolName: request.toolName,
      callId: request.toolUseId,
      ...(command !== undefined ? { command } : {}),
      cwd: request.step.cwd,
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      signal: request.signal,
    });
  } catch {
    answer = 'denied';
  }
  if (!request.signal.aborted && (answer === 'approved' || answer === 'approved-for-session')) return { ...decision, status: 'continue' };
  return { ...decision, status: 'block', reason: decision.reason ?? ASK_DENIED_REASON };
}
