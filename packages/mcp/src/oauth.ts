import {
  OAuthClientFlowError,
  OAuthError,
  SdkHttpError,
  UnauthorizedError,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { errorMessage } from '@switchyard/protocol';
import { invalidatedIssuers, issuedFor, savingIssued } from './oauth-issuers';
import { urlOrigin, withoutUrlSecrets } from './server-url';

/** What the OAuth client keeps for one server between runs; the host's {@link McpTokenStore} holds it. */
export interface McpOAuthState {
  /** The tokens of the last successful authorization (access token, refresh token, scope, expiry, and the issuer that granted them). */
  tokens?: StoredOAuthTokens;
  /** The client registration (dynamic, or pre-registered by the host: `client_id`, `client_secret`), with the issuer it belongs to. */
  clientInformation?: StoredOAuthClientInformation;
  /** The PKCE verifier of the authorization in progress. */
  codeVerifier?: string;
  /** Discovered protected-resource and authorization-server metadata (saves discovery requests). */
  discoveryState?: OAuthDiscoveryState;
  /**
   * The registration and tokens per authorization server (keyed by its `issuer`): credentials
   * one authorization server issued are never offered to another, and a server that moves to a
   * new authorization server gets a new registration there. `tokens` / `clientInformation` above
   * are the latest of them.
   */
  issuers?: Record<string, { tokens?: StoredOAuthTokens; clientInformation?: StoredOAuthClientInformation }>;
}

/** Where the host keeps OAuth credentials, per configured server name. May be synchronous or async. */
export interface McpTokenStore {
  load(server: string): McpOAuthState | undefined | Promise<McpOAuthState | undefined>;
  save(server: string, state: McpOAuthState): void | Promise<void>;
}

/**
 * One authorization the user must grant: open `url`, then resolve with what the authorization
 * server redirected to `redirectUrl` with: the redirect's query (`URLSearchParams`, or the whole
 * redirect `URL`), so its `iss` is checked against the server that was asked (RFC 9207), or the
 * bare `code`.
 */
export interface McpAuthorizationRequest {
  /** The configured server name. */
  readonly server: string;
  /** The server's MCP endpoint. */
  readonly serverUrl: string;
  /** The authorization URL (PKCE, `state`, `resource` and `scope` included) to send the user to. */
  readonly url: URL;
}

/** What `auth.authorize` resolves with: the redirect (`URL` or its query) or the bare code. */
export type McpAuthorizationResponse = string | URL | URLSearchParams;

/** The `auth` option of `mcpTools`: OAuth 2.1 for streamable HTTP servers, through the MCP SDK. */
export interface McpAuthOptions {
  /** Keeps tokens and client registrations per server (required). */
  store: McpTokenStore;
  /**
   * Sends the user to `request.url` and resolves with what the authorization server redirected to
   * `redirectUrl` with: the redirect `URL` or its query (`URLSearchParams`), so the SDK can check
   * the `iss` it carries (RFC 9207), or the bare authorization code. Without it a server that needs
   * a user's consent fails with an "authorization required" warning.
   */
  authorize?: (request: McpAuthorizationRequest) => Promise<McpAuthorizationResponse>;
  /** The redirect URI registered for the client (e.g. `http://127.0.0.1:8765/callback`). */
  redirectUrl?: string;
  /** `client_name` of dynamic registration. Default `switchyard`. */
  clientName?: string;
  /** A URL of a client ID metadata document, used as `client_id` where the server supports it. */
  clientMetadataUrl?: string;
  /** Scope to request when neither the server's challenge nor its metadata names one. */
  scope?: string;
  /**
   * Replaces the built-in provider for a server (e.g. the SDK's `ClientCredentialsProvider` for
   * machine-to-machine access); return `undefined` to use the built-in one.
   */
  provider?: (server: string) => OAuthClientProvider | undefined;
}

/**
 * The SDK's `OAuthClientProvider` over the host's store: discovery, registration, PKCE, token
 * exchange and refresh are the SDK's `auth()`; this class only keeps state and hands the
 * authorization URL to the host, keeping the code it answers for {@link takeAuthorizationCode}.
 */
export class StoreOAuthProvider implements OAuthClientProvider {
  private pendingCallback: URLSearchParams | undefined;

  constructor(
    private readonly server: string,
    private readonly serverUrl: string,
    private readonly options: McpAuthOptions,
  ) {}

  get redirectUrl(): string | undefined {
    return this.options.redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const redirect = this.options.redirectUrl;
    return {
      client_name: this.options.clientName ?? 'switchyard',
      redirect_uris: redirect ? [redirect] : [],
      ...(this.options.scope ? { scope: this.options.scope } : {}),
    };
  }

  private async stored(): Promise<McpOAuthState> {
    return (await this.options.store.load(this.server)) ?? {};
  }

  private async update(change: Partial<McpOAuthState>): Promise<void> {
    const next: McpOAuthState = { ...(await this.stored()), ...change };
    for (const key of Object.keys(next) as Array<keyof McpOAuthState>) if (next[key] === undefined) delete next[key];
    await this.options.store.save(this.server, next);
  }

  async clientInformation(context?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    return issuedFor(await this.stored(), 'clientInformation', context);
  }

  async saveClientInformation(clientInformation: StoredOAuthClientInformation, context?: OAuthClientInformationContext): Promise<void> {
    await this.update(savingIssued(await this.stored(), 'clientInformation', clientInformation, context));
  }

  async tokens(context?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    return issuedFor(await this.stored(), 'tokens', context);
  }

  async saveTokens(tokens: StoredOAuthTokens, context?: OAuthClientInformationContext): Promise<void> {
    await this.update(savingIssued(await this.stored(), 'tokens', tokens, context));
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.update({ codeVerifier });
  }

  async codeVerifier(): Promise<string> {
    const verifier = (await this.stored()).codeVerifier;
    if (!verifier) throw new Error('no PKCE code verifier saved for this authorization');
    return verifier;
  }

  async saveDiscoveryState(discoveryState: OAuthDiscoveryState): Promise<void> {
    await this.update({ discoveryState });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.stored()).discoveryState;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const all = scope === 'all';
    await this.update({
      issuers: invalidatedIssuers(await this.stored(), all || scope === 'tokens', all || scope === 'client'),
      ...(all || scope === 'tokens' ? { tokens: undefined } : {}),
      ...(all || scope === 'client' ? { clientInformation: undefined } : {}),
      ...(all || scope === 'verifier' ? { codeVerifier: undefined } : {}),
      ...(all || scope === 'discovery' ? { discoveryState: undefined } : {}),
    });
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const authorize = this.options.authorize;
    if (!authorize) throw new AuthorizationRequiredError('the server needs a user to authorize this client, and `auth.authorize` is not set');
    if (!this.options.redirectUrl) throw new AuthorizationRequiredError('the server needs a user to authorize this client, and `auth.redirectUrl` is not set');
    const answer = await authorize({ server: this.server, serverUrl: this.serverUrl, url });
    const callback = answer instanceof URL ? answer.searchParams : answer instanceof URLSearchParams ? answer : typeof answer === 'string' && answer !== '' ? new URLSearchParams({ code: answer }) : undefined;
    if (!callback?.get('code')) throw new AuthorizationRequiredError('`auth.authorize` did not resolve with an authorization code (or a redirect carrying one)');
    this.pendingCallback = callback;
  }

  /**
   * Forgets the discovered metadata once an authorization finished: it served that authorization
   * (the callback is checked against the authorization server it started with), and the next one
   * discovers again, so a resource that moved to another authorization server is followed there.
   */
  async forgetDiscovery(): Promise<void> {
    await this.update({ discoveryState: undefined });
  }

  /** The redirect parameters (`code`, `iss`, …) `authorize` answered since the last call, once. */
  takeAuthorizationCallback(): URLSearchParams | undefined {
    const callback = this.pendingCallback;
    this.pendingCallback = undefined;
    return callback;
  }
}

/** The server needs a user's consent this client cannot get. */
export class AuthorizationRequiredError extends Error {
  override name = 'AuthorizationRequiredError';
}

/**
 * The sentence (after "MCP server `name` ") for an HTTP server that refused this client for want
 * of authorization: HTTP 401 (OAuth required), HTTP 403, or an OAuth flow that did not complete;
 * `undefined` for any other error. The server is named by its URL's origin, never its path or query.
 */
export function authorizationProblem(error: unknown, url: string, hasAuth: boolean): string | undefined {
  // the server by its origin, and what it said without the URL's path, query or user info
  const from = urlOrigin(url);
  const detail = withoutUrlSecrets(errorMessage(error), url);
  const status = error instanceof SdkHttpError ? error.status : undefined;
  if (status === 401) {
    if (hasAuth) return `requires OAuth authorization (HTTP 401 Unauthorized from ${from}) and refused the authorized request: ${detail}`;
    return `requires OAuth authorization (HTTP 401 Unauthorized from ${from}); pass \`auth\` to mcpTools (a token store and \`authorize\`) to sign in, or an \`Authorization\` header through \`headers\` / \`bearerTokenEnvVar\``;
  }
  if (status === 403) {
    // The server's own words (the response body) say more than the SDK's summary of the status.
    const body = error instanceof SdkHttpError && typeof error.data.text === 'string' ? withoutUrlSecrets(error.data.text.trim(), url) : '';
    return `refused access (HTTP 403 Forbidden from ${from}): ${body || detail}`;
  }
  if (error instanceof AuthorizationRequiredError) return `requires OAuth authorization (HTTP 401 Unauthorized from ${from}): ${detail}`;
  if (error instanceof UnauthorizedError) return `requires OAuth authorization (HTTP 401 Unauthorized from ${from}): the authorization did not complete${error.message ? ` (${detail})` : ''}`;
  if (error instanceof OAuthError || error instanceof OAuthClientFlowError) return `requires OAuth authorization (from ${from}), which failed: ${detail}`;
  return undefined;
}
