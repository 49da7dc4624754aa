import { errorMessage } from '@switchyard/protocol';
import type { NatsAuth } from '@switchyard/code-mode-nats';

/** Options of {@link runtimeServeCommand}. */
export interface RuntimeServeCommandOptions {
  /** NATS URL(s), comma-separated. */
  nats: string;
  /** Shown to agent hosts. Default `<hostname>-<pid>`. */
  name?: string;
  /** The host's subject token (what its NATS permissions name). Default: random. */
  id?: string;
  /** Agent hosts served, by agent id: the public NKeys that must sign their placements (`--trust-agent id=KEY`). Default: any. */
  trustedAgentHosts?: Record<string, string[]>;
  /** Credentials come from the environment, never from argv (visible in `ps`). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  log?: (text: string) => void;
}

/**
 * The credentials in the environment: NATS_USER + NATS_PASSWORD, NATS_NKEY_SEED_FILE,
 * NATS_CREDS (a .creds file) or NATS_TOKEN; none: anonymous.
 */
export function natsAuthFromEnv(env: NodeJS.ProcessEnv): NatsAuth | undefined {
  if (env.NATS_USER) return { user: env.NATS_USER, pass: env.NATS_PASSWORD ?? '' };
  if (env.NATS_NKEY_SEED_FILE) return { nkeySeedFile: env.NATS_NKEY_SEED_FILE };
  if (env.NATS_CREDS) return { credsFile: env.NATS_CREDS };
  if (env.NATS_TOKEN) return { token: env.NATS_TOKEN };
  return undefined;
}

/**
 * The `--trust-agent <agentId>=<public NKey>[,<key>…]` values (repeatable) as `trustedAgentHosts`,
 * or the sentence saying which one is malformed. The keys themselves are checked by the runtime host.
 */
export function parseTrustedAgents(values: readonly string[]): Record<string, string[]> | string {
  const trusted: Record<string, string[]> = {};
  for (const value of values) {
    const match = /^([^=\s]+)=(\S+)$/.exec(value);
    if (!match) return `--trust-agent expects <agentId>=<public NKey>[,<key>…] (got "${value}")`;
    trusted[match[1]!] = [...(trusted[match[1]!] ?? []), ...match[2]!.split(',').filter(Boolean)];
  }
  return trusted;
}

/**
 * `switchyard runtime serve --nats <url>`: a runtime host serving Code Mode cells to agent hosts
 * over NATS until SIGTERM / SIGINT. Resolves with the exit code: 0 after a signal, 1 when it
 * could not start (refused credentials, no server) or lost its NATS connection for good.
 */
export async function runtimeServeCommand(options: RuntimeServeCommandOptions): Promise<number> {
  const log = options.log ?? ((text: string) => process.stderr.write(text));
  const env = options.env ?? process.env;
  const { serveRuntimeOverNats } = await import('@switchyard/code-mode-nats');
  let host;
  try {
    host = await serveRuntimeOverNats({
      servers: options.nats.split(',').map((url) => url.trim()).filter(Boolean),
      auth: natsAuthFromEnv(env),
      tls: env.NATS_CA ? { caFile: env.NATS_CA } : undefined,
      name: options.name,
      id: options.id,
      trustedAgentHosts: options.trustedAgentHosts,
    });
  } catch (error) {
    log(`switchyard: runtime serve: ${errorMessage(error)}\n`);
    return 1;
  }
  log(`switchyard: runtime host ${host.name} (id ${host.id}) serving cells over ${options.nats}\n`);
  const running = host;
  const stop = () => void running.close('the runtime host received a signal');
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const cause = await running.closed;
  process.removeListener('SIGTERM', stop);
  process.removeListener('SIGINT', stop);
  return cause === 'the runtime host received a signal' ? 0 : 1;
}
