import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import type { SandboxMode, ToolMode } from '@switchyard/protocol';
import { nodeSnapshotFlagProblem } from '@switchyard/code-mode-runtime';
import { modelFromSpec } from '@switchyard/openai';
import { sandboxRefusal } from './builtins';
import { demoCommand } from './demo-command';
import { mcpServeCommand } from './mcp-command';
import { planCommand } from './plan-command';
import { runtimeServeCommand } from './runtime-command';
import { colorsFor } from './render';
import { lineReader, runCommand } from './run-command';
import { VERSION } from './version';

const USAGE = `Usage: switchyard <command> [options]

Commands:
  demo                      a scripted Code Mode turn using all four built-in tools
  run [file|-]              run a JavaScript or TypeScript cell against the built-in tools in this folder
  plan                      print the plan table (what the model sees, what the host runs)
  mcp serve [--config file] serve Code Mode (exec, wait) as an MCP server over stdio
  runtime serve --nats <url> serve Code Mode cells to agent hosts over NATS (credentials from
                            NATS_USER/NATS_PASSWORD, NATS_NKEY_SEED_FILE, NATS_CREDS or NATS_TOKEN)

Options:
  --mode <direct|code-mode|code-mode-only>   tool mode (run, plan; default code-mode-only)
  --json                    machine-readable output
  --yield-time-ms <n>       run: yield after n ms (default 10000)
  --interactive             run: ask "wait or terminate" on every yield
  --model <spec>            demo: openai:<model> (needs OPENAI_API_KEY) or chat:<url>#<model>;
                            without credentials the scripted model runs
  --config <file>           mcp serve: downstream MCP servers ({ "servers": { … } })
  --nats <url[,url]>        runtime serve: the NATS server(s); --name <name>: shown to agent hosts
  --sandbox <mode>          run, demo, mcp serve: read-only | workspace-write (default) |
                            danger-full-access (no sandbox) for exec_command
  --help, --version`;

const MODES: readonly ToolMode[] = ['direct', 'code-mode', 'code-mode-only'];
const SANDBOXES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'danger-full-access'];

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const out = (text: string) => process.stdout.write(text);
  const err = (text: string) => process.stderr.write(text);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        mode: { type: 'string' },
        json: { type: 'boolean', default: false },
        'yield-time-ms': { type: 'string' },
        interactive: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
        version: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        model: { type: 'string' },
        config: { type: 'string' },
        sandbox: { type: 'string' },
        nats: { type: 'string' },
        name: { type: 'string' },
      },
    });
  } catch (error) {
    err(`switchyard: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
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
  if (!MODES.includes(mode)) {
    err(`switchyard: --mode must be one of ${MODES.join(', ')}\n`);
    return 2;
  }
  const sandbox = values.sandbox as SandboxMode | undefined;
  if (sandbox !== undefined && !SANDBOXES.includes(sandbox)) {
    err(`switchyard: --sandbox must be one of ${SANDBOXES.join(', ')}\n`);
    return 2;
  }
  const needsIsolates = command === 'demo' || command === 'run' || command === 'runtime';
  const problem = needsIsolates ? nodeSnapshotFlagProblem() : undefined;
  if (problem) {
    err(`switchyard: ${problem}\n`);
    return 2;
  }
  if (command === 'demo' || command === 'run' || (command === 'mcp' && rest[0] === 'serve')) {
    // Refuse rather than run model commands unsandboxed: a missing bubblewrap is named, not skipped.
    const refusal = await sandboxRefusal(sandbox ?? 'workspace-write', command === 'demo' ? tmpdir() : process.cwd());
    if (refusal) {
      err(refusal);
      return 2;
    }
  }
  const color = !values.json && colorsFor(process.stdout);
  switch (command) {
    case 'demo': {
      let model;
      if (values.model) {
        try {
          model = modelFromSpec(values.model, process.env);
        } catch (error) {
          err(`switchyard: ${(error as Error).message}\n`);
          return 2;
        }
        if (!model) err(`switchyard: no credentials for ${values.model}; running the scripted model\n`);
      }
      return demoCommand({ color, keep: values.keep, model, sandbox }, out);
    }
    case 'mcp':
      if (rest[0] !== 'serve') {
        err(`switchyard: unknown mcp subcommand "${rest[0] ?? ''}" (expected "serve")\n\n${USAGE}\n`);
        return 2;
      }
      return mcpServeCommand({ cwd: process.cwd(), configPath: values.config, sandbox });
    case 'runtime':
      if (rest[0] !== 'serve' || !values.nats) {
        err(`switchyard: expected "runtime serve --nats <url>"\n\n${USAGE}\n`);
        return 2;
      }
      return runtimeServeCommand({ nats: values.nats, name: values.name });
    case 'plan':
      return planCommand({ mode, json: values.json, cwd: process.cwd(), color }, out);
    case 'run': {
      const target = rest[0] ?? '-';
      let source: string;
      try {
        source = target === '-' ? await readStdin() : readFileSync(target, 'utf8');
      } catch (error) {
        err(`switchyard: cannot read ${target}: ${(error as Error).message}\n`);
        return 2;
      }
      const yieldText = values['yield-time-ms'];
      const yieldTimeMs = yieldText === undefined ? undefined : Number(yieldText);
      if (yieldTimeMs !== undefined && !(Number.isInteger(yieldTimeMs) && yieldTimeMs >= 0)) {
        err('switchyard: --yield-time-ms must be a non-negative integer\n');
        return 2;
      }
      const interactive = values.interactive || (target !== '-' && Boolean(process.stdin.isTTY));
      return runCommand(
        {
          source,
          mode,
          cwd: process.cwd(),
          json: values.json,
          color,
          yieldTimeMs,
          interactive,
          answers: interactive && target !== '-' ? lineReader(process.stdin) : undefined,
          progress: process.stderr,
          sandbox,
        },
        out,
      );
    }
    default:
      err(`switchyard: unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
  }
}
