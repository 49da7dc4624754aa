import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorMessage } from '@switchyard/protocol';
import { compileMatcher, type Matcher } from './matcher';
import type { FunctionHook } from './hook-payload';

/** The hook events this engine runs. */
export type HookEventName = 'PreToolUse' | 'PostToolUse';

/** A command handler as written in `hooks.json`. */
export interface CommandHookConfig {
  type: 'command';
  /** Run with `$SHELL -lc <command>` in the session cwd, JSON payload on stdin. */
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
}

/** Any handler of a matcher group. Other `type`s (`prompt`, `agent`) are skipped with a warning. */
export type HookHandlerConfig = CommandHookConfig | FunctionHookConfig;

/** One matcher group: a matcher (absent, `""` or `"*"` match every tool) and its handlers. */
export interface HookMatcherGroup {
  matcher?: string;
  hooks: HookHandlerConfig[];
}

/** The `hooks.json` shape: `{ "hooks": { "PreToolUse": [groups], "PostToolUse": [groups] } }`. */
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
  readonly statusMessage?: string;
}

/** A validated command handler: the command for this platform. */
export interface ConfiguredCommandHandler extends ConfiguredHandlerBase {
  readonly kind: 'command';
  readonly command: string;
}

/** A validated in-process handler. */
export interface ConfiguredFunctionHandler extends ConfiguredHandlerBase {
  readonly kind: 'function';
  readonly run: FunctionHook;
  readonly name?: string;
}

/** A handler after validation, discriminated by `kind`. */
export type ConfiguredHandler = ConfiguredCommandHandler | ConfiguredFunctionHandler;

/** A handler before it is given its place in the configured order. */
type UnorderedHandler = Omit<ConfiguredCommandHandler, 'displayOrder'> | Omit<ConfiguredFunctionHandler, 'displayOrder'>;

/** One configuration layer with where it came from. */
export interface HooksConfigLayer {
  readonly sourcePath: string;
  readonly config: unknown;
}

const HOOK_EVENTS: readonly HookEventName[] = ['PreToolUse', 'PostToolUse'];
/** Events of the hooks.json format that this engine knows of but does not run. */
const OTHER_EVENTS = new Set(['PermissionRequest', 'SessionStart', 'UserPromptSubmit', 'Stop', 'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact', 'Notification']);

/**
 * Reads a `hooks.json` layer. A missing file is no layer (`undefined`, no warning); an unreadable
 * or unparseable file is a warning and no layer. Never throws.
 */
export function readHooksConfigFile(path: string, warnings: string[]): HooksConfigLayer | undefined {
  const sourcePath = resolve(path);
  let text: string;
  try {
    text = readFileSync(sourcePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    warnings.push(`failed to read hooks config ${sourcePath}: ${errorMessage(error)}`);
    return undefined;
  }
  try {
    return { sourcePath, config: JSON.parse(text) };
  } catch (error) {
    warnings.push(`failed to parse hooks config ${sourcePath}: ${errorMessage(error)}`);
    return undefined;
  }
}

/**
 * Validates layers (lowest precedence first) into handlers in configured order. Anything invalid
 * (wrong shapes, invalid regex matchers, empty commands, unknown handler types) is skipped with a
 * warning pushed to `warnings`; never throws.
 */
export function buildHandlers(layers: readonly HooksConfigLayer[], defaultTimeoutSec: number, warnings: string[]): ConfiguredHandler[] {
  const handlers: ConfiguredHandler[] = [];
  let displayOrder = 0;
  for (const { sourcePath, config } of layers) {
    if (!isRecord(config)) {
      warnings.push(`hooks config ${sourcePath} is not an object; skipped`);
      continue;
    }
    const events = config.hooks;
    if (events === undefined) continue;
    if (!isRecord(events)) {
      warnings.push(`"hooks" in ${sourcePath} is not an object; skipped`);
      continue;
    }
    for (const [eventName, groups] of Object.entries(events)) {
      if (!HOOK_EVENTS.includes(eventName as HookEventName)) {
        if (!OTHER_EVENTS.has(eventName)) warnings.push(`unknown hook event "${eventName}" in ${sourcePath}; skipped`);
        continue;
      }
      const event = eventName as HookEventName;
      if (!Array.isArray(groups)) {
        warnings.push(`${event} in ${sourcePath} is not an array of matcher groups; skipped`);
        continue;
      }
      for (const group of groups) {
        if (!isRecord(group) || !Array.isArray(group.hooks)) {
          warnings.push(`a ${event} matcher group in ${sourcePath} has no "hooks" array; skipped`);
          continue;
        }
        if (group.matcher !== undefined && group.matcher !== null && typeof group.matcher !== 'string') {
          warnings.push(`a ${event} matcher in ${sourcePath} is not a string; group skipped`);
          continue;
        }
        const compiled = compileMatcher((group.matcher as string | null | undefined) ?? undefined);
        if ('error' in compiled) {
          warnings.push(`invalid matcher ${JSON.stringify(group.matcher)} in ${sourcePath}: ${compiled.error}`);
          continue;
        }
        for (const handler of group.hooks as unknown[]) {
          const built = buildHandler(handler, { event, matcher: compiled.matcher, sourcePath, defaultTimeoutSec }, warnings);
          if (built) handlers.push({ ...built, displayOrder: displayOrder++ });
        }
      }
    }
  }
  return handlers;
}

function buildHandler(
  raw: unknown,
  base: { event: HookEventName; matcher: Matcher; sourcePath: string; defaultTimeoutSec: number },
  warnings: string[],
): UnorderedHandler | undefined {
  if (!isRecord(raw)) {
    warnings.push(`a ${base.event} handler in ${base.sourcePath} is not an object; skipped`);
    return undefined;
  }
  const timeoutSec = readTimeout(raw.timeout, base, warnings);
  const common = {
    event: base.event,
    matcher: base.matcher,
    sourcePath: base.sourcePath,
    timeoutSec,
    async: raw.async === true,
    failClosed: readFailClosed(raw.failClosed, base, warnings),
    statusMessage: typeof raw.statusMessage === 'string' ? raw.statusMessage : undefined,
  };
  if (raw.type === 'function') {
    if (typeof raw.run !== 'function') {
      warnings.push(`a ${base.event} function handler in ${base.sourcePath} has no run function; skipped`);
      return undefined;
    }
    return { ...common, kind: 'function' as const, run: raw.run as FunctionHook, name: typeof raw.name === 'string' ? raw.name : undefined };
  }
  if (raw.type !== 'command') {
    warnings.push(`skipping ${base.event} handler of unsupported type ${JSON.stringify(raw.type ?? null)} in ${base.sourcePath}`);
    return undefined;
  }
  const command = process.platform === 'win32' && typeof raw.commandWindows === 'string' ? raw.commandWindows : raw.command;
  if (typeof command !== 'string' || command.trim() === '') {
    warnings.push(`skipping empty hook command in ${base.sourcePath}`);
    return undefined;
  }
  return { ...common, kind: 'command' as const, command };
}

/** `failClosed` as written; anything but a boolean is taken as `true` (the safe reading) with a warning. */
function readFailClosed(value: unknown, base: { event: HookEventName; sourcePath: string }, warnings: string[]): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  warnings.push(`a ${base.event} handler in ${base.sourcePath} has a non-boolean failClosed; treating it as true`);
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
