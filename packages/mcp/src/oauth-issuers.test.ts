import { describe, expect, it } from 'vitest';
import type { McpOAuthState } from './oauth';
import { invalidatedIssuers, issuedFor, savingIssued } from './oauth-issuers';

const A = { issuer: 'https://a.example' } as const;
const B = { issuer: 'https://b.example' } as const;
const bearerTokens = (token: string) => ({ access_token: token, token_type: 'Bearer' });

describe('credentials per authorization server', () => {
  it('keeps what each issuer issued apart, and never offers one issuer\'s tokens to another', () => {
    let state: McpOAuthState = {};
    state = { ...state, ...savingIssued(state, 'tokens', bearerTokens('from-a'), A) };
    expect(issuedFor(state, 'tokens', A)).toEqual(bearerTokens('from-a'));
    // The resource moved to B: A's tokens (the latest) are not B's.
    expect(issuedFor(state, 'tokens', B)).toBeUndefined();
    state = { ...state, ...savingIssued(state, 'tokens', bearerTokens('from-b'), B) };
    expect(issuedFor(state, 'tokens', B)).toEqual(bearerTokens('from-b'));
    expect(issuedFor(state, 'tokens', A)).toEqual(bearerTokens('from-a'));
    expect(state.tokens).toEqual(bearerTokens('from-b'));
  });

  it('a registration the host stored itself (bound to no issuer) serves any', () => {
    const state: McpOAuthState = { clientInformation: { client_id: 'pre-registered' } };
    expect(issuedFor(state, 'clientInformation', A)).toEqual({ client_id: 'pre-registered' });
    expect(issuedFor(state, 'clientInformation', undefined)).toEqual({ client_id: 'pre-registered' });
  });

  it('an invalidation drops the named credentials of every issuer and keeps the others', () => {
    const state: McpOAuthState = { issuers: { [A.issuer]: { tokens: bearerTokens('a'), clientInformation: { client_id: 'ca' } } } };
    expect(invalidatedIssuers(state, true, false)).toEqual({ [A.issuer]: { clientInformation: { client_id: 'ca' } } });
    expect(invalidatedIssuers(state, true, true)).toEqual({ [A.issuer]: {} });
    expect(invalidatedIssuers({}, true, true)).toBeUndefined();
  });
});
