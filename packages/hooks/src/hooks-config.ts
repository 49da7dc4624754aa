import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SwitchyardError, errorMessage, type HookEventName } from '@switchyard/protocol';
import { compileMatcher, type Matcher } from './matcher';
import type { FunctionHook } from './hook-payload';
import { headerProblem } from './http-hook';
import { parseHookUrl, redactUrl, urlRefusal } from './http-url-policy';

/** The hook events this engine runs: around tool calls, and the session's lifecycle. */
export type { HookEventName };

/** A command handler as written in `hooks.json`. */
export interface CommandHookConfig {
  type: 'command';
  /**
   * Run with `/bin/sh -c <command>` (the engine's `shell` / `loginShell` change it) in the folder of
   * the `hooks.json` that declares it (the session cwd for a `config` object), JSON payload on stdin.
   */
  command: string;
  /** Used instead of `command` on Windows (`%COMSPEC% /C`). */
  commandWindows?: string;
  /** Seconds before the process group is killed (minimum 1, default 600). */
  timeout?: number;
  /** Fire and forget: the outcome never affects the call (it is still reported by events). */
  async?: boolean;
  statusMessage?: string;
  /**
   * A timeout, crash, spawn failure or unreadable answer blocks the call (PreToolUse) or withholds
   * the output (PostToolUse) instead of failing open. Default: the engine's `failClosed` (false).
   */
  failClosed?: boolean;
  /**
   * The hook must run: fail-closed, and a failure's block message names the hook. A required
   * handler that cannot be loaded (invalid matcher, empty command, …) refuses engine creation
   * with a `CONFIG` error. Default: the engine's `required` (false).
   */
  required?: boolean;
}

/** An in-process handler: same input object as command stdin, same output object as command stdout. */
export interface FunctionHookConfig {
  type: 'function';
  /** A label for run ids and warnings. */
  name?: string;
  run: FunctionHook;
  /** Seconds before the handler is abandoned (its signal aborts) and fails open (or closed, see `failClosed`). */
  timeout?: number;
  async?: boolean;
  /** As {@link CommandHookConfig.failClosed}: a throw, rejection or timeout blocks. */
  failClosed?: boolean;
  /** As {@link CommandHookConfig.required}. */
  required?: boolean;
}

/**
 * An HTTP handler: the stdin JSON is POSTed to `url` and a 2xx answer's body is read as a command's
 * stdout. Loopback, private and link-local addresses (checked after resolving the name) are reached
 * only through a URL of the engine's `allowedHttpHookUrls`; with that list set, only its URLs.
 */
export interface HttpHookConfig {
  type: 'http';
  /** An `http` or `https` URL without credentials. */
  url: string;
  /** Request headers; `$NAME` / `${NAME}` are filled from the environment for names in `allowedEnvVars` (others become empty). Never shown in events or errors. */
  headers?: Record<string, string>;
  /** Environment variables header values may read. */
  allowedEnvVars?: string[];
  /** Seconds before the request is abandoned (minimum 1, default the engine's `defaultTimeoutSec`). */
  timeout?: number;
  async?: boolean;
  statusMessage?: string;
  /** As {@link CommandHookConfig.failClosed}. */
  failClosed?: boolean;
  /** As {@link CommandHookConfig.required}. */
  required?: boolean;
}

/**
 * An MCP tool handler: calls `tool` (its raw MCP name) of the server named `server` in the engine's
 * `mcpServers`, with the stdin object as its arguments; the result's structured content (as JSON)
 * or its text is read as a command's stdout, an error result is a failure.
 */
export interface McpToolHookConfig {
  type: 'mcp_tool';
  server: string;
  tool: string;
  /** Seconds before the call is cancelled (minimum 1, default the engine's `defaultTimeoutSec`). */
  timeout?: number;
  async?: boolean;
  statusMessage?: string;
  /** As {@link CommandHookConfig.failClosed}. */
  failClosed?: boolean;
  /** As {@link CommandHookConfig.required}. */
  required?: boolean;
}

/** Any handler of a matcher group. Other `type`s (`prompt`, `agent`) are skipped with a warning. */
export type HookHandlerConfig = CommandHookConfig | FunctionHookConfig | HttpHookConfig | McpToolHookConfig;

/** One matcher group: a matcher (absent, `""` or `"*"` match every tool) and its handlers. */
export interface HookMatcherGroup {
  matcher?: string;
  hooks: HookHandlerConfig[];
}

/** The `hooks.json` shape: `{ "hooks": { "PreToolUse": [groups], "PostToolUse": [groups], "Stop": [groups], … } }`. */
export interface HooksConfig {
  hooks?: Partial<Record<HookEventName, HookMatcherGroup[]>> & Record<string, unknown>;
}

/** Registers one in-process hook without writing a config object. */
export interface FunctionHookRegistration {
  event: HookEventName;
  matcher?: string;
  name?: string;
  timeout?: number;
  async?: boolean;
  /** A throw, rejection or timeout blocks instead of failing open. Default: the engine's `failClosed`. */
  failClosed?: boolean;
  /** As {@link CommandHookConfig.required}. */
  required?: boolean;
  run: FunctionHook;
}

/** What every handler carries after validation, in configured order. */
interface ConfiguredHandlerBase {
  readonly event: HookEventName;
  readonly matcher: Matcher;
  /** Position among every configured handler (the `index` of run ids). */
  readonly displayOrder: number;
  /** The hooks.json path, `<config:N>` or `<function>`. */
  readonly sourcePath: string;
  readonly timeoutSec: number;
  readonly async: boolean;
  /** The handler's own `failClosed`; `undefined` means the engine's. */
  readonly failClosed?: boolean;
  /** Required (its own setting or the engine's): fails closed, and its failure names it. */
  readonly required: boolean;
  /** How warnings and block messages name it: the command or function name, and its source. */
  readonly label: string;
  readonly statusMessage?: string;
}

/** A validated command handler: the command for this platform. */
export interface ConfiguredCommandHandler extends ConfiguredHandlerBase {
  readonly kind: 'command';
  readonly command: string;
  /** The folder of the declaring `hooks.json`; `undefined` (session cwd) for a `config` object. */
  readonly dir?: string;
}

/** A validated in-process handler. */
export interface ConfiguredFunctionHandler extends ConfiguredHandlerBase {
  readonly kind: 'function';
  readonly run: FunctionHook;
  readonly name?: string;
}

/** A validated HTTP handler. */
export interface ConfiguredHttpHandler extends ConfiguredHandlerBase {
  readonly kind: 'http';
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly allowedEnvVars: readonly string[];
}

/** A validated MCP tool handler (its server is one of the engine's `mcpServers`). */
export interface ConfiguredMcpToolHandler extends ConfiguredHandlerBase {
  readonly kind: 'mcp_tool';
  readonly server: string;
  readonly tool: string;
}

/** A handler after validation, discriminated by `kind`. */
export type ConfiguredHandler = ConfiguredCommandHandler | ConfiguredFunctionHandler | ConfiguredHttpHandler | ConfiguredMcpToolHandler;

/** A handler before it is given its place in the configured order. */
type UnorderedHandler =
  | Omit<ConfiguredCommandHandler, 'displayOrder'>
  | Omit<ConfiguredFunctionHandler, 'displayOrder'>
  | Omit<ConfiguredHttpHandler, 'displayOrder'>
  | Omit<ConfiguredMcpToolHandler, 'displayOrder'>;

/** One configuration layer with where it came from. */
export interface HooksConfigLayer {
  readonly sourcePath: string;
  readonly config: unknown;
  /** The folder command hooks of this layer run in (a file's folder); absent for objects. */
  readonly dir?: string;
}

/** A `configFiles` entry: a path (it must exist), or `{ path, optional: true }` for a layer that may be absent. */
export type HooksConfigFile = string | { path: string; optional?: boolean };

/** The events every handler list is kept for, in this order. */
export const HOOK_EVENTS: readonly HookEventName[] = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
  'SessionStart',
  'UserPromptSubmit',
  'Stop',
  'SessionEnd',
  'Interrupt',
];
/** Events of the hooks.json format that this engine knows of but does not run. */
const OTHER_EVENTS = new Set(['SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact', 'Notification']);

/** Loading settings: the default timeout, and whether every handler is required. */
export interface LoadSettings {
  readonly defaultTimeoutSec: number;
  /** The engine's `required`: every handler is required, so anything skipped refuses creation. */
  readonly requireAll: boolean;
  /** The engine's `allowedHttpHookUrls`, parsed (`undefined`: not set). */
  readonly allowedHttpHookUrls?: readonly URL[];
  /** The server names of the engine's `mcpServers` (`undefined`: none configured). */
  readonly mcpServers?: ReadonlySet<string>;
}

/** The `CONFIG` error of a required hook (or, with `requireAll`, any configuration) that cannot be loaded. */
function requiredLoadError(problem: string): SwitchyardError {
  return new SwitchyardError('CONFIG', `createHookEngine: a required hook cannot be loaded: ${problem}`);
}

/**
 * Reads a `hooks.json` layer. A missing file is a `CONFIG` error naming it, unless the entry is
 * `{ path, optional: true }` (then it is no layer). An unreadable or unparseable file is a warning
 * and no layer, or a `CONFIG` error when every hook is required.
 */
export function readHooksConfigFile(entry: HooksConfigFile, index: number, warnings: string[], requireAll = false): HooksConfigLayer | undefined {
  const { path, optional } = typeof entry === 'string' ? { path: entry, optional: false } : entry;
  const sourcePath = resolve(path);
  const warn = (problem: string) => {
    if (requireAll) throw requiredLoadError(problem);
    warnings.push(problem);
    return undefined;
  };
  let text: string;
  try {
    text = readFileSync(sourcePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      if (optional === true) return undefined;
      throw new SwitchyardError('CONFIG', `createHookEngine: configFiles[${index}] ${sourcePath} does not exist (pass { path, optional: true } for a layer that may be absent)`);
    }
    return warn(`failed to read hooks config ${sourcePath}: ${errorMessage(error)}`);
  }
  try {
    return { sourcePath, config: JSON.parse(text), dir: dirname(sourcePath) };
  } catch (error) {
    return warn(`failed to parse hooks config ${sourcePath}: ${errorMessage(error)}`);
  }
}

/**
 * Validates layers (lowest precedence first) into handlers in configured order. Anything invalid
 * (wrong shapes, invalid regex matchers, empty commands, unknown handler types) is skipped with a
 * warning pushed to `warnings`; a skipped handler that is required (or anything skipped when
 * `settings.requireAll`) throws a `CONFIG` error instead.
 */
export function buildHandlers(layers: readonly HooksConfigLayer[], settings: LoadSettings, warnings: string[]): ConfiguredHandler[] {
  const handlers: ConfiguredHandler[] = [];
  const add = (handler: UnorderedHandler) => handlers.push({ ...handler, displayOrder: handlers.length } as ConfiguredHandler);
  for (const layer of layers) {
    const { sourcePath, config } = layer;
    const warn = (problem: string, required = false) => {
      if (required || settings.requireAll) throw requiredLoadError(problem);
      warnings.push(problem);
    };
    if (!isRecord(config)) {
      warn(`hooks config ${sourcePath} is not an object; skipped`);
      continue;
    }
    const events = config.hooks;
    if (events === undefined) continue;
    if (!isRecord(events)) {
      warn(`"hooks" in ${sourcePath} is not an object; skipped`);
      continue;
    }
    for (const [eventName, groups] of Object.entries(events)) {
      if (!HOOK_EVENTS.includes(eventName as HookEventName)) {
        if (!OTHER_EVENTS.has(eventName)) warn(`unknown hook event "${eventName}" in ${sourcePath}; skipped`);
        continue;
      }
      const event = eventName as HookEventName;
      if (!Array.isArray(groups)) {
        warn(`${event} in ${sourcePath} is not an array of matcher groups; skipped`);
        continue;
      }
      for (const group of groups) buildGroup(group, { event, layer, settings, warn }).forEach(add);
    }
  }
  return handlers;
}

/** One matcher group's handlers; a skipped group with a required handler refuses creation. */
function buildGroup(
  group: unknown,
  base: { event: HookEventName; layer: HooksConfigLayer; settings: LoadSettings; warn: (problem: string, required?: boolean) => void },
): UnorderedHandler[] {
  const { event, layer, warn } = base;
  const sourcePath = layer.sourcePath;
  if (!isRecord(group) || !Array.isArray(group.hooks)) {
    warn(`a ${event} matcher group in ${sourcePath} has no "hooks" array; skipped`);
    return [];
  }
  const anyRequired = (group.hooks as unknown[]).some((handler) => isRecord(handler) && handler.required === true);
  if (group.matcher !== undefined && group.matcher !== null && typeof group.matcher !== 'string') {
    warn(`a ${event} matcher in ${sourcePath} is not a string; group skipped`, anyRequired);
    return [];
  }
  const compiled = compileMatcher((group.matcher as string | null | undefined) ?? undefined);
  if ('error' in compiled) {
    warn(`invalid matcher ${JSON.stringify(group.matcher)} in ${sourcePath}: ${compiled.error}`, anyRequired);
    return [];
  }
  const built: UnorderedHandler[] = [];
  for (const raw of group.hooks as unknown[]) {
    const problems: string[] = [];
    const handler = buildHandler(raw, { event, matcher: compiled.matcher, layer, settings: base.settings }, problems);
    const required = base.settings.requireAll || (isRecord(raw) && raw.required === true);
    // a handler that loaded may still carry warnings (a bad timeout); only a skipped one is fatal
    for (const problem of problems) warn(problem, required && handler === undefined);
    if (handler) built.push(handler);
  }
  return built;
}

function buildHandler(
  raw: unknown,
  base: { event: HookEventName; matcher: Matcher; layer: HooksConfigLayer; settings: LoadSettings },
  warnings: string[],
): UnorderedHandler | undefined {
  const { sourcePath } = base.layer;
  if (!isRecord(raw)) {
    warnings.push(`a ${base.event} handler in ${sourcePath} is not an object; skipped`);
    return undefined;
  }
  const where = { event: base.event, sourcePath, defaultTimeoutSec: base.settings.defaultTimeoutSec };
  const common = {
    event: base.event,
    matcher: base.matcher,
    sourcePath,
    timeoutSec: readTimeout(raw.timeout, where, warnings),
    async: raw.async === true,
    failClosed: readFlag('failClosed', raw.failClosed, where, warnings),
    required: base.settings.requireAll || readFlag('required', raw.required, where, warnings) === true,
    statusMessage: typeof raw.statusMessage === 'string' ? raw.statusMessage : undefined,
  };
  if (raw.type === 'function') {
    if (typeof raw.run !== 'function') {
      warnings.push(`a ${base.event} function handler in ${sourcePath} has no run function; skipped`);
      return undefined;
    }
    const name = typeof raw.name === 'string' ? raw.name : undefined;
    return { ...common, kind: 'function' as const, run: raw.run as FunctionHook, name, label: `function hook ${name ?? '(unnamed)'} (${sourcePath})` };
  }
  const kindInput = (kind: string): KindInput => ({
    settings: base.settings,
    common,
    sourcePath,
    skip: (problem) => void warnings.push(`skipping ${base.event} ${kind} hook in ${sourcePath}: ${problem}`),
  });
  if (raw.type === 'http') return buildHttpHandler(raw, kindInput('http'));
  if (raw.type === 'mcp_tool') return buildMcpToolHandler(raw, kindInput('mcp_tool'));
  if (raw.type !== 'command') {
    warnings.push(`skipping ${base.event} handler of unsupported type ${JSON.stringify(raw.type ?? null)} in ${sourcePath}`);
    return undefined;
  }
  const command = process.platform === 'win32' && typeof raw.commandWindows === 'string' ? raw.commandWindows : raw.command;
  if (typeof command !== 'string' || command.trim() === '') {
    warnings.push(`skipping empty hook command in ${sourcePath}`);
    return undefined;
  }
  return { ...common, kind: 'command' as const, command, dir: base.layer.dir, label: `hook "${command}" (${sourcePath})` };
}

/** What every handler kind shares once read. */
type CommonFields = Omit<ConfiguredHandlerBase, 'displayOrder' | 'label'>;

/** What a kind's builder reads besides the raw handler; `skip` warns that the handler is skipped, and why. */
interface KindInput {
  settings: LoadSettings;
  common: CommonFields;
  sourcePath: string;
  skip: (problem: string) => undefined;
}

/** An `http` handler: its URL (http or https, no credentials, listed when a list is set), its headers. */
function buildHttpHandler(raw: Record<string, unknown>, { settings, common, sourcePath, skip }: KindInput): UnorderedHandler | undefined {
  if (typeof raw.url !== 'string') return skip('"url" is not a string');
  const parsed = parseHookUrl(raw.url);
  if ('problem' in parsed) return skip(`its url ${parsed.problem}`);
  // a literal loopback or private address, or a URL a list leaves out, is refused now rather than at every call
  const refused = urlRefusal(parsed.url, settings.allowedHttpHookUrls);
  if (refused) return skip(refused.replace('http hook refused: ', ''));
  const headers = raw.headers ?? {};
  if (!isRecord(headers)) return skip('"headers" is not an object');
  const problem = headerProblem(headers as Record<string, string>);
  if (problem) return skip(`it ${problem}`);
  const allowedEnvVars = raw.allowedEnvVars ?? [];
  if (!Array.isArray(allowedEnvVars) || allowedEnvVars.some((name) => typeof name !== 'string')) return skip('"allowedEnvVars" is not a list of names');
  const label = `http hook ${redactUrl(parsed.url)} (${sourcePath})`;
  return { ...common, kind: 'http' as const, url: parsed.url, headers: { ...(headers as Record<string, string>) }, allowedEnvVars: allowedEnvVars as string[], label };
}

/** An `mcp_tool` handler: its server must be one of the engine's `mcpServers`. */
function buildMcpToolHandler(raw: Record<string, unknown>, { settings, common, sourcePath, skip }: KindInput): UnorderedHandler | undefined {
  if (typeof raw.server !== 'string' || raw.server === '') return skip('"server" is not a server name');
  if (typeof raw.tool !== 'string' || raw.tool === '') return skip('"tool" is not a tool name');
  const servers = settings.mcpServers;
  if (!servers) return skip(`server "${raw.server}" is not configured: the engine has no \`mcpServers\``);
  if (!servers.has(raw.server)) return skip(`server "${raw.server}" is not one of the engine's mcpServers (${[...servers].join(', ') || 'none'})`);
  const label = `mcp_tool hook ${raw.server}/${raw.tool} (${sourcePath})`;
  return { ...common, kind: 'mcp_tool' as const, server: raw.server, tool: raw.tool, label };
}

/** `failClosed` / `required` as written; anything but a boolean is taken as `true` (the safe reading) with a warning. */
function readFlag(name: string, value: unknown, base: { event: HookEventName; sourcePath: string }, warnings: string[]): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  warnings.push(`a ${base.event} handler in ${base.sourcePath} has a non-boolean ${name}; treating it as true`);
  return true;
}

function readTimeout(value: unknown, base: { event: HookEventName; sourcePath: string; defaultTimeoutSec: number }, warnings: string[]): number {
  if (value === undefined || value === null) return Math.max(1, base.defaultTimeoutSec);
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    warnings.push(`a ${base.event} handler in ${base.sourcePath} has a non-numeric timeout; using ${base.defaultTimeoutSec}s`);
    return Math.max(1, base.defaultTimeoutSec);
  }
  return Math.max(1, value);
}

/** A plain object (config objects may hold functions, so this is wider than a JSON object). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
