import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { errorMessage, type ApprovalPolicy, type ContentItem, type CustomToolCallOutputItem, type SandboxMode, type ToolCallItem, type ToolOutputItem, type WireTool } from '@switchyard/protocol';
import { nodeSnapshotFlagProblem } from '@switchyard/code-mode-runtime';
import { mcpTools, serveCodeModeOverMcp, type CodeModeDispatchResult, type CodeModeMcpHost, type CodeModeMcpServer, type McpServerConfig, type McpTools } from '@switchyard/mcp';
import { createSession, type Turn } from '@switchyard/session';
import { SIGNALS, builtinTools } from './builtins';
import { mcpClientApprovals } from './mcp-serve-approvals';
import { MCP_SERVE_STARTUP_WAIT_MS, awaitNamedServers, execWhileStarting } from './mcp-serve-startup';

/** The largest output budget a script may ask for under `mcp serve` (about 400 KB of text). */
export const MCP_SERVE_MAX_OUTPUT_TOKENS = 100_000;

/**
 * The token budget of `exec`'s description under `mcp serve`. Serve offers only `exec` and `wait`,
 * so that description is the one tool list the client's model reads: it gets room for the
 * template, the shared MCP types and a catalog of a few dozen tools (a session's default is 2,000).
 */
const MCP_SERVE_TOOL_BUDGET_TOKENS = 8_000;

/** Options of {@link mcpServeCommand}. */
export interface McpServeCommandOptions {
  /** Workspace root of the built-in file and process tools. */
  cwd: string;
  /** A JSON file `{ "servers": { "<name>": McpServerConfig } }` naming downstream MCP servers. */
  configPath?: string;
  /** Sandbox of exec_command (default workspace-write). */
  sandbox?: SandboxMode;
  /**
   * When exec_command asks before running (default `never`). Approvals go to the MCP client: an
   * `elicitation/create` (2025-11-25) or `input_required` (2026-07-28); a client that cannot be
   * asked denies.
   */
  approvalPolicy?: ApprovalPolicy;
  /** The protocol streams. Default `process.stdin` / `process.stdout`. */
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  /** Where warnings and errors go (never stdout: it carries the protocol). Default: `process.stderr`. */
  log?: (text: string) => void;
  /** How long a script naming a tool of a downstream server still starting waits for it (ms). Default 30,000. */
  startupWaitMs?: number;
}

/** Reads and checks the `--config` file; throws an Error with a one-line reason. */
export function readMcpServeConfig(path: string): Record<string, McpServerConfig> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${path}: ${errorMessage(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not valid JSON: ${errorMessage(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${path} must hold a JSON object with a "servers" object`);
  const unknown = Object.keys(parsed).filter((key) => key !== 'servers');
  if (unknown.length > 0) throw new Error(`${path}: unknown key ${unknown.map((key) => `"${key}"`).join(', ')} (only "servers" is read)`);
  const servers = (parsed as { servers?: unknown }).servers ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) throw new Error(`${path}: "servers" must be an object keyed by server name`);
  // Every relative path of a stdio server is relative to the configuration file's folder, wherever
  // serve was started: its `cwd` (resolved here), and — since a child resolves a relative `command`
  // and its `args` against its own working directory — its `command` and `args`, by making that
  // folder the working directory of a server that names none. HTTP servers have no paths.
  const base = dirname(resolve(path));
  return Object.fromEntries(
    Object.entries(servers as Record<string, McpServerConfig>).map(([name, config]) => {
      if (typeof config !== 'object' || config === null || typeof (config as { command?: unknown }).command !== 'string') return [name, withoutServerInstructions(config)];
      const cwd = (config as { cwd?: unknown }).cwd;
      return [name, withoutServerInstructions({ ...config, cwd: typeof cwd === 'string' ? resolve(base, cwd) : base })];
    }),
  );
}

/**
 * A downstream server's `instructions` are its own text, and `exec`'s description is what serve's
 * client (another agent) reads as ours: they stay out unless the configuration gives the server a
 * `description` of its own (an empty description means none).
 */
function withoutServerInstructions(config: McpServerConfig): McpServerConfig {
  if (typeof config !== 'object' || config === null || (config as { description?: unknown }).description !== undefined) return config;
  return { ...config, description: '' };
}

function toolNamed(tools: readonly WireTool[], name: string): WireTool {
  const found = tools.find((tool) => (tool as { name?: unknown }).name === name);
  if (!found) throw new Error(`the session did not plan \`${name}\``);
  return found;
}

/** Appends `notify()` texts (injected since the call started) to an output item as text items. */
function withNotes(item: ToolOutputItem, notes: readonly string[]): ToolOutputItem {
  if (notes.length === 0 || item.type === 'tool_search_output') return item;
  const extra: ContentItem[] = notes.map((text) => ({ type: 'input_text', text }));
  const body: ContentItem[] = typeof item.output === 'string' ? [{ type: 'input_text', text: item.output }] : item.output;
  return { ...item, output: [...body, ...extra] };
}

/**
 * `switchyard mcp serve`: Code Mode as an MCP server over stdio. `exec` and `wait` run in one
 * session over the built-in tools and the tools of the downstream MCP servers in `configPath`.
 * Serves until stdin closes, then shuts everything down. Exit code 0, or 2 for a bad configuration.
 */
export async function mcpServeCommand(options: McpServeCommandOptions): Promise<number> {
  const log = options.log ?? ((text: string) => void process.stderr.write(text));
  const problem = nodeSnapshotFlagProblem();
  if (problem) {
    log(`switchyard: ${problem}\n`);
    return 2;
  }
  const downstream = await startDownstream(options.configPath, log);
  if (!downstream) return 2;

  const approvalPolicy = options.approvalPolicy ?? 'never';
  const builtins = builtinTools(options.cwd, options.sandbox, approvalPolicy, { onSignal: 'leave' });
  const approvals = mcpClientApprovals();
  const session = createSession({
    toolMode: 'code-mode-only',
    tools: () => [...builtins.tools, ...downstream.executors()],
    cwd: options.cwd,
    approvalPolicy,
    approvals: approvals.provider,
    toolBudget: { tokens: MCP_SERVE_TOOL_BUDGET_TOKENS },
    // A script's `max_output_tokens` / `wait.max_tokens` is clamped here; serveCodeModeOverMcp
    // also caps each result's bytes (images included) under the official client's message limit.
    codeMode: { maxOutputTokensCap: MCP_SERVE_MAX_OUTPUT_TOKENS },
  });
  // One turn for the whole connection and one step per MCP call: every call plans afresh (so
  // downstream list changes show) and some step's worker is always attached, so a yielded cell's
  // nested calls keep being served between MCP calls.
  const turn = session.beginTurn();
  // SIGTERM / SIGINT / SIGHUP (the SDK client sends SIGTERM 2 s after ending stdin) close the
  // connection, so the cleanup below runs to its end and serve exits 0: the built-ins leave the
  // exit to serve (`onSignal: 'leave'`) and only kill their tools' processes. The downstream servers
  // are closed in the handler itself too, at once: a server still starting (it may never read
  // stdin) must go even when the client SIGKILLs serve before the cleanup is done. A second
  // signal, once the handlers are gone, ends the process the default way.
  let served: CodeModeMcpServer | undefined;
  let signalled = false;
  let detachApprovals: (() => void) | undefined;
  const onSignal = () => {
    // the first signal only: the handlers go now, so a second one (another signal too) ends the process
    stopListening();
    signalled = true;
    void downstream.close();
    void served?.close();
  };
  const stopListening = () => SIGNALS.forEach((signal) => process.off(signal, onSignal));
  SIGNALS.forEach((signal) => process.on(signal, onSignal));
  try {
    served = await serveCodeModeOverMcp({
      host: turnHost(turn, downstream, options.startupWaitMs ?? MCP_SERVE_STARTUP_WAIT_MS),
      stdin: options.stdin,
      stdout: options.stdout,
      name: 'switchyard',
      onError: (error) => log(`switchyard mcp serve: ${error.message}\n`),
    });
    detachApprovals = approvals.attach(session, served);
    // a signal that came while the server was being set up
    if (signalled) void served.close();
    await served.closed;
    return 0;
  } finally {
    detachApprovals?.();
    turn.abort('the MCP client disconnected');
    // The downstream servers first and alongside the rest: their processes are what could be left behind.
    const downstreamClosed = downstream.close();
    await turn.end();
    await Promise.all([session.shutdown(), builtins.exec.shutdown(), downstreamClosed]);
    stopListening();
  }
}

/** The downstream MCP servers of the `--config` file, started; `undefined` once a bad configuration is logged. */
async function startDownstream(configPath: string | undefined, log: (text: string) => void): Promise<McpTools | undefined> {
  try {
    const servers = configPath === undefined ? {} : readMcpServeConfig(configPath);
    // Not waiting: `initialize` is answered at once, and each server's tools are announced
    // (`notifications/tools/list_changed`) as it comes up; a dead or slow server delays nothing.
    return await mcpTools({ servers, waitForServers: false, onWarning: (warning) => log(`switchyard mcp serve: ${warning.message}\n`) });
  } catch (error) {
    log(`switchyard: ${errorMessage(error)}\n`);
    return undefined;
  }
}

/**
 * The MCP server's host over one turn: each call runs in a fresh step. `exec` and `wait` are not
 * parallel-safe (a step's gate runs them one at a time); steps do not share a gate, so calls are
 * queued here.
 */
function turnHost(turn: Turn, downstream: McpTools, startupWaitMs: number): CodeModeMcpHost {
  const queue = createCallQueue();
  return {
    async describe() {
      const step = await turn.step();
      // while downstream servers start, `exec` says so instead of calling its catalog complete
      return { exec: execWhileStarting(toolNamed(step.tools, 'exec'), downstream, startupWaitMs), wait: toolNamed(step.tools, 'wait') };
    },
    dispatch: (item, { signal }) =>
      queue.run(signal, async () => {
        // a script naming a tool of a server still starting waits for it (bounded), then is planned with its tools
        const refusal = await awaitNamedServers(downstream, item, signal, startupWaitMs);
        if (refusal !== undefined) return { item: { type: 'custom_tool_call_output', call_id: item.call_id, output: refusal }, success: false };
        return dispatchInStep(turn, item, signal);
      }),
    onToolsChanged: (listener) => {
      // a server that comes up adds tools; one that fails is no longer "starting" in `exec`'s description
      const stops = [downstream.on('tools-changed', () => listener()), downstream.on('warning', (warning) => warning.kind === 'server-failed' && listener())];
      return () => stops.forEach((stop) => stop());
    },
  };
}

/** Runs tasks one at a time in call order; a task whose signal aborted while it waited is refused. */
function createCallQueue() {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    run<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> {
      const run = queue.then(() => {
        if (signal.aborted) throw new Error('cancelled before it started');
        return task();
      });
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

/** One MCP call in a new step of `turn`, its output carrying the `notify()` texts injected meanwhile. */
async function dispatchInStep(turn: Turn, item: ToolCallItem, signal: AbortSignal): Promise<CodeModeDispatchResult> {
  const step = await turn.step();
  const call = step.router.buildToolCall(item);
  if (!call) throw new Error(`not a tool call: ${item.type}`);
  const result = await step.runtime.handle(call, { signal });
  const notes = turn.takeInjected().flatMap((injected) => {
    if (injected.type !== 'custom_tool_call_output') return [];
    const output = (injected as CustomToolCallOutputItem).output;
    return typeof output === 'string' ? [output] : output.map((part) => (part.type === 'input_text' ? part.text : part.image_url));
  });
  return { item: withNotes(result.item, notes), success: result.success };
}
