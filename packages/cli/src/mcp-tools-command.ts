import { errorMessage } from '@switchyard/protocol';
import { serveToolsOverMcp, type ServedMcpServer } from '@switchyard/mcp';
import { loadToolsModule } from './tools-module';

/** Options of {@link mcpServeToolsCommand}. */
export interface McpServeToolsCommandOptions {
  /** The `--tools` module: a file path (relative to `cwd`) or a package name resolved from `cwd`. */
  tools: string;
  /** Where relative paths and package names are resolved; the `cwd` of the tools' calls. */
  cwd: string;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  /** Where warnings and errors go (never stdout: it carries the protocol). Default: `process.stderr`. */
  log?: (text: string) => void;
}

/**
 * `switchyard mcp serve --tools <module>`: the executors a module exports, each an MCP tool over
 * stdio, called through the registry (validation, the result rule, cancellation). Serves until
 * stdin closes. Exit code 0, or 2 when the module cannot be loaded, exports no executor, or holds
 * one the registry refuses (a duplicate name, another protocol line).
 */
export async function mcpServeToolsCommand(options: McpServeToolsCommandOptions): Promise<number> {
  const log = options.log ?? ((text: string) => void process.stderr.write(text));
  let served: ServedMcpServer;
  try {
    const tools = await loadToolsModule(options.tools, options.cwd);
    served = await serveToolsOverMcp({
      tools,
      step: { cwd: options.cwd },
      stdin: options.stdin,
      stdout: options.stdout,
      name: 'switchyard-tools',
      onError: (error) => log(`switchyard mcp serve: ${error.message}\n`),
    });
  } catch (error) {
    log(`switchyard mcp serve: ${errorMessage(error)}\n`);
    return 2;
  }
  const onSignal = () => void served.close();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await served.closed;
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
