import type { OAuthClientInformationContext } from '@modelcontextprotocol/client';
import type { McpOAuthState } from './oauth';

// Credentials per authorization server: a registration or tokens one authorization server issued
// are never offered to another, and a resource that moves to a new authorization server gets a
// new registration there. `McpOAuthState.issuers` keeps them by `issuer`; the state's own
// `tokens` / `clientInformation` are the latest, as a host that reads the store expects.

type IssuedKey = 'tokens' | 'clientInformation';

/**
 * The registration or tokens for the authorization server `context` names: its own entry, or the
 * latest ones unless another authorization server issued them (a registration the host stored
 * itself, bound to none, serves any). Without `context`, the latest.
 */
export function issuedFor<K extends IssuedKey>(state: McpOAuthState, key: K, context: OAuthClientInformationContext | undefined): McpOAuthState[K] {
  if (!context) return state[key];
  const own = state.issuers?.[context.issuer]?.[key];
  if (own !== undefined) return own as McpOAuthState[K];
  const latest = state[key];
  const issuedElsewhere = Object.entries(state.issuers ?? {}).some(([issuer, entry]) => issuer !== context.issuer && JSON.stringify(entry[key]) === JSON.stringify(latest));
  return issuedElsewhere ? undefined : latest;
}

/** The state change that saves `value` as the latest and, with `context`, as that issuer's. */
export function savingIssued<K extends IssuedKey>(state: McpOAuthState, key: K, value: NonNullable<McpOAuthState[K]>, context: OAuthClientInformationContext | undefined): Partial<McpOAuthState> {
  if (!context) return { [key]: value };
  const issuers = { ...state.issuers };
  issuers[context.issuer] = { ...issuers[context.issuer], [key]: value };
  return { [key]: value, issuers };
}

/** `issuers` with the tokens and/or registrations an invalidation drops removed. */
export function invalidatedIssuers(state: McpOAuthState, dropTokens: boolean, dropClient: boolean): McpOAuthState['issuers'] {
  if (!state.issuers) return undefined;
  return Object.fromEntries(
    Object.entries(state.issuers).map(([issuer, entry]) => [
      issuer,
      { ...(dropTokens ? {} : { tokens: entry.tokens }), ...(dropClient ? {} : { clientInformation: entry.clientInformation }) },
    ]),
  );
}
