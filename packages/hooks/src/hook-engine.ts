import {
  DEFAULT_HOOK_INPUT_BOUNDS,
  SwitchyardError,
  errorMessage,
  isSwitchyardError,
  type ApprovalProvider,
  type HookEndEvent,
  type HookRunner,
  type HookStartEvent,
  type JsonBounds,
  type McpToolCaller,
  type McpToolCallerFactory,
  type SwitchyardEventListener,
} from '@switchyard/protocol';
import { checkOptions, createEventHub, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import { DEFAULT_MAX_OUTPUT_BYTES } from './command-runner';
import {
  HOOK_EVENTS,
  buildHandlers,
  readHooksConfigFile,
  type FunctionHookRegistration,
  type HookEventName,
  type HooksConfig,
  type HooksConfigFile,
  type HooksConfigLayer,
} from './hooks-config';
import { parseAllowList } from './http-url-policy';
import { safeMatch, toolNames, type EngineContext } from './engine-core';
import { runPostToolUse, runPostToolUseFailure, runPreToolUse } from './tool-events';
import { aggregateLifecycle, aggregatePermission, runLifecycle } from './lifecycle-events';

/** Options of {@link createHookEngine}. */
export interface HookEngineOptions {
  /**
   * `hooks.json` layer paths, lowest precedence first. A path that does not exist is a `CONFIG`
   * error, unless given as `{ path, optional: true }`; a broken file is a warning (a `CONFIG` error
   * with `required`). Command hooks of a file run in its folder.
   */
  configFiles?: readonly HooksConfigFile[];
  /** Configuration objects (hooks.json shape; handlers may also be `{type:"function", run}`), after the files. */
  config?: HooksConfig | readonly HooksConfig[];
  /** In-process hooks, after every config layer. */
  functionHooks?: readonly FunctionHookRegistration[];
  /** Answers PreToolUse `permissionDecision:"ask"`; falls back to `step.approvals`. Without either, `ask` fails open. */
  approvals?: ApprovalProvider;
  /** Shell for command hooks, run as `<shell> -c <command>`. Default `/bin/sh` (`$SHELL` with `loginShell`). */
  shell?: string;
  /** Run command hooks in a login shell (`-lc`): profiles are read on every run (seconds on some machines). Default false. */
  loginShell?: boolean;
  /** `transcript_path` on every hook's stdin (a lifecycle request's own wins). Default `null`. */
  transcriptPath?: string;
  /** Timeout of handlers that set none, in seconds. Default 600. */
  defaultTimeoutSec?: number;
  /** Cap of captured stdout and of captured stderr, each, in bytes. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Extra environment variables for command hooks (on top of `process.env`). */
  env?: Record<string, string>;
  /**
   * Fail closed: a handler that times out, crashes, cannot be spawned or answers something
   * unreadable blocks the call (PreToolUse) or withholds the tool's output from the model
   * (PostToolUse) instead of failing open. A handler's own `failClosed` overrides this. Default false
   * (the reference's fail-open behaviour). `async` handlers never block either way.
   */
  failClosed?: boolean;
  /**
   * Every hook is required: a hook that cannot run, times out or fails blocks the call with a
   * message naming it, and any configuration problem refuses creation (`CONFIG`). A handler's own
   * `required: true` does the same for that handler. Default false.
   */
  required?: boolean;
  /**
   * How deep and large the stdin object may be. An input past them (or one that cannot be
   * serialized) is never run unhooked: PreToolUse blocks, PostToolUse withholds the output.
   * Default 100 levels and 16 Mi characters (the registry refuses such calls earlier).
   */
  inputBounds?: JsonBounds;
  /**
   * URL prefixes `http` hooks may call. Unset: any URL whose host resolves to public addresses only
   * (loopback, private, link-local and other reserved ranges are refused, the address connected to
   * being the one checked). Set: only URLs under one of these prefixes (same scheme, host and port,
   * the path at or below the prefix's), whatever they resolve to — how a hook reaches a service on
   * this machine or the local network. Redirects (307/308) are followed only to URLs allowed the
   * same way. An entry that is not an http(s) URL is a `CONFIG` error.
   */
  allowedHttpHookUrls?: readonly string[];
  /**
   * MCP servers `mcp_tool` hooks may call, by name: the configuration `mcpTools({ servers })` of
   * `@switchyard/mcp` takes. Needs `mcpToolCaller`. Servers are started at their first hook call,
   * kept for later ones, started again after they died, and stopped by `close()`.
   */
  mcpServers?: Readonly<Record<string, object>>;
  /**
   * Makes the caller of `mcp_tool` hooks from `mcpServers`: pass `createMcpToolCaller` from
   * `@switchyard/mcp` (this package holds no MCP client, so that its hosts need none).
   */
  mcpToolCaller?: McpToolCallerFactory;
}

/** The hook engine: a protocol `HookRunner` (every lifecycle event included) plus events, configuration warnings and cleanup. */
export interface HookEngine extends Required<HookRunner> {
  /** Subscribes to `hook-start` / `hook-end`; returns the unsubscribe function. A throwing listener is reported as a `SWITCHYARD_LISTENER` process warning and never breaks a hook run. */
  on<T extends 'hook-start' | 'hook-end'>(type: T, listener: SwitchyardEventListener<T>): () => void;
  /** Problems found while loading the configuration (each skipped something). */
  readonly warnings: readonly string[];
  /** Number of handlers configured per event. */
  readonly handlerCounts: Readonly<Record<HookEventName, number>>;
  /** Kills every hook process still running (including `async` ones), cancels running HTTP and MCP calls, waits for them, then stops the `mcpServers` it started. */
  close(): Promise<void>;
}

const HOOK_ENGINE_OPTION_RULES: OptionsShape<HookEngineOptions> = {
  configFiles: rule.listOf(rule.anyOf(rule.string(), rule.shape<{ path: string; optional?: boolean }>({ path: rule.required(rule.string()), optional: rule.boolean() }))),
  config: rule.anyOf(rule.object(), rule.listOf(rule.object())),
  functionHooks: rule.listOf(rule.object()),
  approvals: rule.object(),
  shell: rule.string(),
  loginShell: rule.boolean(),
  transcriptPath: rule.string(),
  required: rule.boolean(),
  defaultTimeoutSec: rule.number({ min: 0 }),
  maxOutputBytes: rule.number({ min: 1, integer: true }),
  env: rule.object(),
  failClosed: rule.boolean(),
  allowedHttpHookUrls: rule.listOf(rule.string()),
  mcpServers: rule.object(),
  mcpToolCaller: rule.function(),
  inputBounds: rule.shape<JsonBounds>({ maxDepth: rule.required(rule.number({ min: 1, integer: true })), maxChars: rule.required(rule.number({ min: 1, integer: true })) }),
};

/** The layers in precedence order: config files, config objects, then function hooks. */
function collectLayers(options: HookEngineOptions, warnings: string[]): HooksConfigLayer[] {
  const layers: HooksConfigLayer[] = [];
  (options.configFiles ?? []).forEach((entry, index) => {
    const layer = readHooksConfigFile(entry, index, warnings, options.required === true);
    if (layer) layers.push(layer);
  });
  const configs = options.config === undefined ? [] : Array.isArray(options.config) ? options.config : [options.config as HooksConfig];
  configs.forEach((config, index) => layers.push({ sourcePath: `<config:${index}>`, config }));
  for (const registration of options.functionHooks ?? []) {
    const { event, matcher, ...handler } = registration;
    layers.push({ sourcePath: `<function${handler.name ? `:${handler.name}` : ''}>`, config: { hooks: { [event]: [{ matcher, hooks: [{ ...handler, type: 'function' }] }] } } });
  }
  return layers;
}

/** The `mcp_tool` caller made from `mcpServers`; a configuration the factory refuses is a `CONFIG` error naming the option. */
function createMcpCaller(options: HookEngineOptions): McpToolCaller | undefined {
  if (options.mcpServers === undefined) return undefined;
  if (!options.mcpToolCaller) {
    throw new SwitchyardError('CONFIG', 'createHookEngine: option `mcpServers` needs `mcpToolCaller` (pass `createMcpToolCaller` from @switchyard/mcp: this package holds no MCP client)');
  }
  let caller: McpToolCaller;
  try {
    caller = options.mcpToolCaller(options.mcpServers);
  } catch (error) {
    if (isSwitchyardError(error) && error.code === 'CONFIG') throw new SwitchyardError('CONFIG', `createHookEngine: option \`mcpServers\`: ${error.message}`, { cause: error });
    throw new SwitchyardError('CONFIG', `createHookEngine: option \`mcpToolCaller\` failed: ${errorMessage(error)}`, { cause: error });
  }
  if (typeof caller?.callTool !== 'function' || typeof caller.close !== 'function') {
    throw new SwitchyardError('CONFIG', 'createHookEngine: option `mcpToolCaller` must return an McpToolCaller (`callTool` and `close`)');
  }
  return caller;
}

/**
 * Creates a hook engine implementing the protocol `HookRunner`. Loading never throws for a broken
 * handler: invalid parts of the configuration are skipped and listed in `engine.warnings` (a
 * `CONFIG` error when the handler is required). The `run*` methods never reject; failed hooks fail
 * open (or closed, when required or fail-closed) and appear in `warnings`.
 */
export function createHookEngine(options: HookEngineOptions = {}): HookEngine {
  checkOptions('createHookEngine', options, HOOK_ENGINE_OPTION_RULES);
  const warnings: string[] = [];
  const allowedHttpHookUrls = parseAllowList(options.allowedHttpHookUrls);
  const mcpCaller = createMcpCaller(options);
  const settings = {
    defaultTimeoutSec: options.defaultTimeoutSec ?? 600,
    requireAll: options.required === true,
    allowedHttpHookUrls,
    mcpServers: mcpCaller && options.mcpServers ? new Set(Object.keys(options.mcpServers)) : undefined,
  };
  let handlers;
  try {
    handlers = buildHandlers(collectLayers(options, warnings), settings, warnings);
  } catch (error) {
    // nothing was started yet, but a caller may hold something: released, never thrown from
    void Promise.resolve().then(() => mcpCaller?.close()).catch(() => undefined);
    throw error;
  }
  const context: EngineContext = {
    handlers,
    // /bin/sh -c starts in milliseconds; a login shell reads profiles on every hooked call
    shell: options.shell ?? (options.loginShell ? process.env.SHELL || '/bin/sh' : '/bin/sh'),
    loginShell: options.loginShell === true,
    transcriptPath: options.transcriptPath,
    env: options.env ? { ...process.env, ...options.env } : process.env,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    inputBounds: options.inputBounds ?? DEFAULT_HOOK_INPUT_BOUNDS,
    failClosed: options.failClosed,
    approvals: options.approvals,
    allowedHttpHookUrls,
    mcpCaller,
    // a throwing listener is reported (process warning SWITCHYARD_LISTENER) and never breaks a hook run
    events: createEventHub<HookStartEvent | HookEndEvent>({ name: 'hooks' }),
    running: new Set(),
  };
  return {
    warnings,
    handlerCounts: Object.fromEntries(HOOK_EVENTS.map((event) => [event, handlers.filter((handler) => handler.event === event).length])) as Record<HookEventName, number>,
    runPreToolUse: (request) => runPreToolUse(context, request),
    runPostToolUse: (request) => runPostToolUse(context, request),
    runPostToolUseFailure: (request) => runPostToolUseFailure(context, request),
    hasToolHooks: (event, request) => handlers.some((handler) => handler.event === event && safeMatch(handler, toolNames(request))),
    runSessionStart: async (request) => aggregateLifecycle(await runLifecycle(context, 'SessionStart', request)),
    runUserPromptSubmit: async (request) => aggregateLifecycle(await runLifecycle(context, 'UserPromptSubmit', request)),
    runStop: async (request) => aggregateLifecycle(await runLifecycle(context, 'Stop', request)),
    runSessionEnd: async (request) => aggregateLifecycle(await runLifecycle(context, 'SessionEnd', request)),
    runPermissionRequest: async (request) => aggregatePermission(await runLifecycle(context, 'PermissionRequest', request)),
    runInterrupt: async (request) => aggregateLifecycle(await runLifecycle(context, 'Interrupt', request)),
    on: (type, listener) => context.events.on(type, listener),
    async close() {
      const pending = [...context.running];
      for (const entry of pending) entry.controller.abort();
      await Promise.all(pending.map((entry) => entry.done));
      await Promise.resolve()
        .then(() => mcpCaller?.close())
        .catch(() => undefined);
    },
  };
}
