import type { ToolCallItem, WireTool } from '@switchyard/protocol';
import type { McpServerStatus, McpTools } from '@switchyard/mcp';

/**
 * The longest a script waits, under `mcp serve`, for downstream servers still starting whose tools
 * it names (a server's own `startupTimeoutMs`, 10 s by default, usually ends the wait first).
 */
export const MCP_SERVE_STARTUP_WAIT_MS = 30_000;

/** The downstream servers still starting. */
function startingServers(downstream: McpTools): McpServerStatus[] {
  return downstream.servers().filter((server) => server.state === 'starting');
}

/** The sentence naming the servers still starting and what a script calling one of their tools gets. */
function startingNote(starting: readonly McpServerStatus[], waitMs: number): string {
  const names = starting.map((server) => `\`${server.name}\` (\`${server.namespace}*\`)`).join(', ');
  return `MCP servers still starting: ${names}. Their tools are not listed yet; a script that calls one waits until its server is ready (up to ${Math.round(waitMs / 1000)} s).`;
}

/**
 * `exec` as described while downstream servers start: the catalog line no longer says "complete"
 * (a server still starting will add tools), and says which servers are starting and that a call
 * to one of their tools waits. Unchanged once every server is ready or failed.
 */
export function execWhileStarting(exec: WireTool, downstream: McpTools, waitMs = MCP_SERVE_STARTUP_WAIT_MS): WireTool {
  const starting = startingServers(downstream);
  const description = (exec as { description?: unknown }).description;
  if (starting.length === 0 || typeof description !== 'string') return exec;
  const note = startingNote(starting, waitMs);
  const complete = /Tool catalog: complete \(([^)]*)\)\./;
  const lines = description.split('\n');
  const index = lines.findIndex((line) => line.startsWith('Tool catalog:'));
  if (index < 0) lines.push('', note);
  else if (complete.test(lines[index])) lines[index] = lines[index].replace(complete, (_all, count: string) => `Tool catalog: incomplete: ${count === 'no nested tools' ? 'no nested tools' : count} described so far. ${note}`);
  else lines[index] = `${lines[index]} ${note}`;
  return { ...exec, description: lines.join('\n') } as WireTool;
}

/**
 * Before an `exec` runs: when its script names a tool of a downstream server still starting
 * (`mcp__<server>__…` anywhere in its text), waits until that server is ready or failed — at most
 * `waitMs` ({@link MCP_SERVE_STARTUP_WAIT_MS}), or until the call is cancelled — so the cell is planned with its
 * tools. Resolves to a refusal text for the model when a named server is still starting after the
 * wait, else `undefined` (the script runs: a server that failed is the script's to handle).
 */
export async function awaitNamedServers(downstream: McpTools, item: ToolCallItem, signal: AbortSignal, waitMs = MCP_SERVE_STARTUP_WAIT_MS): Promise<string | undefined> {
  if (item.type !== 'custom_tool_call' || item.name !== 'exec') return undefined;
  const named = () => startingServers(downstream).filter((server) => item.input.includes(server.namespace));
  if (named().length === 0) return undefined;
  const started = Date.now();
  await new Promise<void>((resolve) => {
    const check = () => {
      if (named().length > 0 && !signal.aborted && Date.now() - started < waitMs) return;
      clearInterval(poll);
      clearTimeout(deadline);
      unsubscribe.forEach((stop) => stop());
      signal.removeEventListener('abort', check);
      resolve();
    };
    // a server leaves `starting` with a `tools-changed` (ready) or a `warning` (failed); the poll is the backstop
    const unsubscribe = [downstream.on('tools-changed', check), downstream.on('warning', check)];
    const poll = setInterval(check, 250);
    const deadline = setTimeout(check, waitMs);
    signal.addEventListener('abort', check, { once: true });
    check();
  });
  const still = named();
  if (still.length === 0 || signal.aborted) return undefined;
  const names = still.map((server) => `\`${server.name}\``).join(', ');
  return `exec was not run: the script calls tools of MCP server${still.length === 1 ? '' : 's'} ${names}, still starting after ${Math.round((Date.now() - started) / 1000)} s; run it again once ${still.length === 1 ? 'it is' : 'they are'} ready`;
}
