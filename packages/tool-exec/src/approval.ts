import { RespondToModelError, type ApprovalPolicy, type ApprovalProvider, type ApprovalRequest } from '@switchyard/protocol';

/** What a user's refusal answers (reference §5.4). */
export const EXEC_REJECTED_MESSAGE = 'exec command rejected by user';

/** The refusal of an escalation under a policy that cannot ask (reference §5.4). */
export function escalationRefusedMessage(policy: ApprovalPolicy): string {
  return `approval policy is ${policy}; reject command — you cannot ask for escalated permissions if the approval policy is ${policy}`;
}

/**
 * Approvals a provider granted "for the session": the exact command, or every command starting
 * with the words of the model's `prefix_rule`. Escalated and sandboxed grants are kept apart.
 */
export class ApprovalMemory {
  private readonly commands = new Set<string>();
  private readonly prefixes: Array<{ escalated: boolean; words: string[] }> = [];

  remember(command: string, escalated: boolean, prefixRule?: readonly string[]): void {
    if (prefixRule && prefixRule.length > 0) this.prefixes.push({ escalated, words: [...prefixRule] });
    else this.commands.add(`${escalated}\u0000${command.trim()}`);
  }

  covers(command: string, escalated: boolean): boolean {
    if (this.commands.has(`${escalated}\u0000${command.trim()}`)) return true;
    const words = command.trim().split(/\s+/);
    return this.prefixes.some((rule) => rule.escalated === escalated && rule.words.every((word, index) => words[index] === word));
  }
}

/**
 * Asks `provider` (when there is one) and throws the model-visible refusal unless approved.
 * A throwing or rejecting provider counts as a refusal; no provider means nobody can approve.
 */
export async function requireApproval(
  provider: ApprovalProvider | undefined,
  request: ApprovalRequest,
  memory: ApprovalMemory,
  prefixRule?: readonly string[],
): Promise<void> {
  const command = request.command ?? '';
  const escalated = request.escalated ?? false;
  if (memory.covers(command, escalated)) return;
  if (!provider) {
    throw new RespondToModelError('exec command rejected: no approval provider is configured to ask the user', { code: 'APPROVAL_DENIED' });
  }
  let decision: string;
  try {
    decision = await provider.requestApproval(request);
  } catch {
    decision = 'denied';
  }
  if (decision === 'approved-for-session') memory.remember(command, escalated, prefixRule);
  if (decision !== 'approved' && decision !== 'approved-for-session') {
    throw new RespondToModelError(EXEC_REJECTED_MESSAGE, { code: 'APPROVAL_DENIED' });
  }
}
