import type { ApprovalProvider, ApprovalRequest } from '@switchyard/protocol';

const wrapped = new WeakMap<ApprovalProvider, ApprovalProvider>();

/**
 * The host's approval provider as the session hands it to tools: each request's `signal` is kept
 * but made non-enumerable, so a host that logs `JSON.stringify(request)` reads the request's fields
 * and no `"signal":{}` (an `AbortSignal` has no enumerable state). One wrapper per provider.
 */
export function hostApprovals(provider: ApprovalProvider | undefined): ApprovalProvider | undefined {
  if (!provider) return undefined;
  let found = wrapped.get(provider);
  if (!found) {
    found = { requestApproval: (request) => provider.requestApproval(withQuietSignal(request)) };
    wrapped.set(provider, found);
  }
  return found;
}

function withQuietSignal(request: ApprovalRequest): ApprovalRequest {
  const { signal, ...fields } = request;
  return Object.defineProperty(fields, 'signal', { value: signal, enumerable: false }) as ApprovalRequest;
}
