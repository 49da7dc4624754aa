import { RespondToModelError, type ApprovalPolicy, type ApprovalProvider, type ApprovalRequest } from '@switchyard/protocol';

/** What a user's refusal answers. */
export const EXEC_REJECTED_MESSAGE = 'exec command rejected by user';

/** The refusal of an escalation under a policy that cannot ask. */
export function escalationRefusedMessage(policy: ApprovalPolicy): string {
  const name = REFERENCE_POLICY_NAMES[policy];
  return `approval policy is ${name}; reject command — you cannot ask for escalated permissions if the approval policy is ${name}`;
}

/** The reference names its policies by their Rust variants in this message (`Never`, `OnRequest`, …). */
const REFERENCE_POLICY_NAMES: Record<ApprovalPolicy, string> = {
  never: 'Never',
  'on-request': 'OnRequest',
  'on-failure': 'OnFailure',
  untrusted: 'UnlessTrusted',
};

/**
 * Characters that make a shell string more than one simple command, or let it compute words at
 * run time: `; & | \` $ < > ( )`, newlines. A remembered prefix rule never covers such a string
 * (`git status; curl x | sh` must not ride on a `git` grant).
 */
const SHELL_SYNTAX = /[;&|`$<>()\n\r]/;

function wordsOf(command: string): string[] {
  const trimmed = command.trim();
  return trimmed === '' ? [] : trimmed.split(/\s+/);
}

/**
 * True when `prefixRule` may be remembered for `command`: non-empty, free of shell syntax, and a
 * word prefix of a command that is itself free of shell syntax.
 */
export function isValidPrefixRule(command: string, prefixRule: readonly string[] | undefined): prefixRule is readonly string[] {
  if (!prefixRule || prefixRule.length === 0) return false;
  if (SHELL_SYNTAX.test(command) || prefixRule.some((word) => word === '' || /\s/.test(word) || SHELL_SYNTAX.test(word))) return false;
  const words = wordsOf(command);
  return prefixRule.length <= words.length && prefixRule.every((word, index) => words[index] === word);
}

/**
 * Approvals a provider granted "for the session": the exact command, or every simple command (no
 * shell operators or expansions) starting with the words of the model's `prefix_rule` — remembered
 * only when the rule is a word prefix of the approved command. Escalated and sandboxed grants are
 * kept apart.
 */
export class ApprovalMemory {
  private readonly commands = new Set<string>();
  private readonly prefixes: Array<{ escalated: boolean; words: string[] }> = [];

  remember(command: string, escalated: boolean, prefixRule?: readonly string[]): void {
    this.commands.add(`${escalated}\u0000${command.trim()}`);
    if (isValidPrefixRule(command, prefixRule)) this.prefixes.push({ escalated, words: [...prefixRule] });
  }

  covers(command: string, escalated: boolean): boolean {
    if (this.commands.has(`${escalated}\u0000${command.trim()}`)) return true;
    if (SHELL_SYNTAX.test(command)) return false;
    const words = wordsOf(command);
    return this.prefixes.some((rule) => rule.escalated === escalated && rule.words.length <= words.length && rule.words.every((word, index) => words[index] === word));
  }
}

/** The request's `reason`, plus what an "approved for the session" answer would also allow. */
function reasonWithRule(reason: string | undefined, command: string, prefixRule: readonly string[] | undefined): string | undefined {
  if (!prefixRule || prefixRule.length === 0) return reason;
  const rule = JSON.stringify(prefixRule);
  const note = isValidPrefixRule(command, prefixRule)
    ? `Approving for the session also allows, without asking, every command starting with ${rule} (simple commands only, no shell operators).`
    : `The requested prefix_rule ${rule} is ignored (not a word prefix of this simple command); approving for the session covers this exact command only.`;
  return reason ? `${reason}\n${note}` : note;
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
    const reason = reasonWithRule(request.reason, command, prefixRule);
    decision = await provider.requestApproval(reason === undefined ? request : { ...request, reason });
  } catch {
    decision = 'denied';
  }
  if (decision === 'approved-for-session') memory.remember(command, escalated, prefixRule);
  if (decision !== 'approved' && decision !== 'approved-for-session') {
    throw new RespondToModelError(EXEC_REJECTED_MESSAGE, { code: 'APPROVAL_DENIED' });
  }
}
