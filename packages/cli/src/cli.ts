import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { APPROVAL_POLICIES, type ApprovalPolicy, type ModelClient, type SandboxMode, type ToolMode } from '@switchyard/protocol';
import { nodeSnapshotFlagProblem } from '@switchyard/code-mode-runtime';
import { modelFromSpec } from '@switchyard/openai';
import { sandboxRefusal } from './builtins';
import { demoCommand } from './demo-command';
import { mcpServeCommand } from './mcp-command';
import { mcpServeToolsCommand } from './mcp-tools-command';
import { planCommand } from './plan-command';
import { parseTrustedAgents, runtimeServeCommand } from './runtime-command';
import { colorsFor } from './render';
import { lineReader, runCommand } from './run-command';
import { VERSION } from './version';

const USAGE = `Usage: switchyard <command> [options]

Commands:
  demo                      a scripted Code Mode turn using all four built-in tools
  run [file|-]              run a JavaScript or TypeScript cell against the built-in tools in this folder
  plan                      print the plan table (what the model sees, what the host runs)
  mcp serve [--config file] serve Code Mode (exec, wait) as an MCP server over stdio
  mcp serve --tools <module> serve the executors a module (file or package) exports as MCP tools
  runtime serve --nats <url> serve Code Mode cells to agent hosts over NATS (credentials from
                            NATS_USER/NATS_PASSWORD, NATS_NKEY_SEED_FILE, NATS_CREDS or NATS_TOKEN)

Options:
  --mode <direct|code-mode|code-mode-only>   tool mode (run, plan; default code-mode-only)
  --json                    machine-readable output
  --yield-time-ms <n>       run: yield after n ms (default 10000)
  --cpu-time-ms <n|false>   run: the cell's CPU time limit (default 60000; false: none)
  --wall-time-ms <n|false>  run: the cell's wall-clock limit (default: none)
  --interactive             run: ask "wait or terminate" on every yield
  --model <spec>            demo: openai:<model> (needs OPENAI_API_KEY) or chat:<url>#<model>;
                            without credentials the scripted model runs
  --config <file>           mcp serve: downstream MCP servers ({ "servers": { … } })
  --tools <module>          mcp serve: a file or package exporting executors (default export: an
                            executor, an array or a factory; or named exports of executors)
  --nats <url[,url]>        runtime serve: the NATS server(s); --name <name>: shown to agent hosts;
                            --id <token>: the host's subject token (what its NATS permissions name);
                            --trust-agent <agentId>=<public NKey> (repeatable): serve only placements
                            of that agent id signed by that key
  --sandbox <mode>          run, demo, mcp serve: read-only | workspace-write (default) |
                            danger-full-access (no sandbox) for exec_command
  --approval-policy <p>     mcp serve: when exec_command asks the MCP client before running:
                            never (default) | on-request | on-failure | untrusted
  --help, --version`;

const MODES: readonly ToolMode[] = ['direct', 'code-mode', 'code-mode-only'];
const SANDBOXES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'danger-full-access'];

const OPTIONS = {
  mode: { type: 'string' },
  json: { type: 'boolean', default: false },
  'yield-time-ms': { type: 'string' },
  'cpu-time-ms': { type: 'string' },
  'wall-time-ms': { type: 'string' },
  interactive: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
  version: { type: 'boolean', default: false },
  keep: { type: 'boolean', default: false },
  model: { type: 'string' },
  config: { type: 'string' },
  tools: { type: 'string' },
  sandbox: { type: 'string' },
  'approval-policy': { type: 'string' },
  nats: { type: 'string' },
  name: { type: 'string' },
  id: { type: 'string' },
  'trust-agent': { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options'];

type CliValues = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** What every command reads of the command line, checked. */
interface CommandContext {
  values: CliValues;
  mode: ToolMode;
  sandbox: SandboxMode | undefined;
  color: boolean;
}

/** A command line the CLI refuses: `message` goes to stderr as is and the CLI exits 2. */
class CommandLineRefusal extends Error {}

function refuse(message: string): never {
  throw new CommandLineRefusal(message);
}

const out = (text: string) => process.stdout.write(text);
const err = (text: string) => process.stderr.write(text);

/** Runs the CLI; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    return await runCommandLine(argv);
  } catch (error) {
    if (!(error instanceof CommandLineRefusal)) throw error;
    err(error.message);
    return 2;
  }
}

async function runCommandLine(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  if (values.version) {
    out(`${VERSION}\n`);
    return 0;
  }
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    out(`${USAGE}\n`);
    return command || values.help ? 0 : 2;
  }
  const mode = (values.mode ?? 'code-mode-only') as ToolMode;
  if (!MODES.includes(mode)) refuse(`switchyard: --mode must be one of ${MODES.join(', ')}\n`);
  const sandbox = values.sandbox as SandboxMode | undefined;
  if (sandbox !== undefined && !SANDBOXES.includes(sandbox)) refuse(`switchyard: --sandbox must be one of ${SANDBOXES.join(', ')}\n`);
  await checkPrerequisites(command, rest, sandbox, values.tools);
  const context: CommandContext = { values, mode, sandbox, color: !values.json && colorsFor(process.stdout) };
  switch (command) {
    case 'demo':
      return demoCommand({ color: context.color, keep: values.keep, model: demoModel(values.model), sandbox }, out);
    case 'mcp':
      if (rest[0] !== 'serve') refuse(`switchyard: unknown mcp subcommand "${rest[0] ?? ''}" (expected "serve")\n\n${USAGE}\n`);
      if (values.tools !== undefined) {
        if (values.config !== undefined) refuse('switchyard: mcp serve takes --tools or --config, not both (--tools serves executors, --config Code Mode over MCP servers)\n');
        if (values['approval-policy'] !== undefined) refuse("switchyard: mcp serve takes --approval-policy without --tools only (it sets when Code Mode's exec_command asks the MCP client; --tools serves executors)\n");
        return mcpServeToolsCommand({ tools: values.tools, cwd: process.cwd() });
      }
      return mcpServeCommand({ cwd: process.cwd(), configPath: values.config, sandbox, approvalPolicy: approvalPolicyFlag(values['approval-policy']) });
    case 'runtime':
      if (rest[0] !== 'serve' || !values.nats) refuse(`switchyard: expected "runtime serve --nats <url>"\n\n${USAGE}\n`);
      return runtimeServeCommand({ nats: values.nats, name: values.name, id: values.id, trustedAgentHosts: trustedAgents(values['trust-agent']) });
    case 'plan':
      return planCommand({ mode, json: values.json, cwd: process.cwd(), color: context.color }, out);
    case 'run':
      return runCellCommand(rest[0] ?? '-', context);
    default:
      refuse(`switchyard: unknown command "${command}"\n\n${USAGE}\n`);
  }
}

/** `--trust-agent` values as `trustedAgentHosts` (none: undefined, any agent host); a malformed one is refused. */
function trustedAgents(values: string[] | undefined): Record<string, string[]> | undefined {
  if (!values) return undefined;
  const parsed = parseTrustedAgents(values);
  if (typeof parsed === 'string') refuse(`switchyard: ${parsed}\n`);
  return parsed;
}

function parseCommandLine(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });
  } catch (error) {
    refuse(`switchyard: ${(error as Error).message}\n\n${USAGE}\n`);
  }
}

/**
 * Refuses a command whose environment is missing: isolates need `--no-node-snapshot`, and model
 * commands are refused rather than run unsandboxed (a missing bubblewrap is named, not skipped).
 */
async function checkPrerequisites(command: string, rest: readonly string[], sandbox: SandboxMode | undefined, tools: string | undefined): Promise<void> {
  const needsIsolates = command === 'demo' || command === 'run' || command === 'runtime';
  const problem = needsIsolates ? nodeSnapshotFlagProblem() : undefined;
  if (problem) refuse(`switchyard: ${problem}\n`);
  // `mcp serve --tools` runs no process of its own: the sandbox is the executors' business.
  if (command === 'demo' || command === 'run' || (command === 'mcp' && rest[0] === 'serve' && !tools)) {
    const refusal = await sandboxRefusal(sandbox ?? 'workspace-write', command === 'demo' ? tmpdir() : process.cwd());
    if (refusal) refuse(refusal);
  }
}

/** `--approval-policy` checked (`undefined` when absent). */
function approvalPolicyFlag(value: string | undefined): ApprovalPolicy | undefined {
  if (value === undefined) return undefined;
  if (!APPROVAL_POLICIES.includes(value as ApprovalPolicy)) refuse(`switchyard: --approval-policy must be one of ${APPROVAL_POLICIES.join(', ')}\n`);
  return value as ApprovalPolicy;
}

/** The demo's model from `--model`; `undefined` (the scripted model) when absent or without credentials. */
function demoModel(spec: string | undefined): ModelClient | undefined {
  if (!spec) return undefined;
  let model;
  try {
    model = modelFromSpec(spec, process.env);
  } catch (error) {
    refuse(`switchyard: ${(error as Error).message}\n`);
  }
  if (!model) err(`switchyard: no credentials for ${spec}; running the scripted model\n`);
  return model;
}

/** `switchyard run [file|-]`: reads the cell's source and runs it. */
async function runCellCommand(target: string, { values, mode, sandbox, color }: CommandContext): Promise<number> {
  let source: string;
  try {
    source = target === '-' ? await readStdin() : readFileSync(target, 'utf8');
  } catch (error) {
    refuse(`switchyard: cannot read ${target}: ${(error as Error).message}\n`);
  }
  const yieldText = values['yield-time-ms'];
  const yieldTimeMs = yieldText === undefined ? undefined : Number(yieldText);
  if (yieldTimeMs !== undefined && !(Number.isInteger(yieldTimeMs) && yieldTimeMs >= 0)) refuse('switchyard: --yield-time-ms must be a non-negative integer\n');
  const limits = { cpuTimeMs: limitFlag(values, 'cpu-time-ms'), wallTimeMs: limitFlag(values, 'wall-time-ms') };
  const interactive = values.interactive || (target !== '-' && Boolean(process.stdin.isTTY));
  return runCommand(
    {
      source,
      mode,
      cwd: process.cwd(),
      json: values.json,
      color,
      yieldTimeMs,
      limits,
      interactive,
      answers: interactive && target !== '-' ? lineReader(process.stdin) : undefined,
      progress: process.stderr,
      sandbox,
    },
    out,
  );
}

/** A cell limit flag: a positive integer of milliseconds, `false` for none, or absent (the runtime's default). */
function limitFlag(values: CliValues, flag: 'cpu-time-ms' | 'wall-time-ms'): number | false | undefined {
  const text = values[flag];
  if (text === undefined) return undefined;
  if (text === 'false') return false;
  const value = Number(text);
  if (!(Number.isInteger(value) && value >= 1)) refuse(`switchyard: --${flag} must be a positive integer of milliseconds or false\n`);
  return value;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
