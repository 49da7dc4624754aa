import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// These tests run the real, built binary (its shebang carries --no-node-snapshot): `pnpm build` first.
const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');
let workspace = '';

function runCli(args: string[], input?: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd: workspace, env: { ...env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

beforeAll(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build the cli package first (pnpm --filter @switchyard/cli build)`);
  workspace = mkdtempSync(join(tmpdir(), 'switchyard-cli-'));
  writeFileSync(join(workspace, 'hello.txt'), 'hello from a file\n');
});
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

describe('switchyard (the built binary)', () => {
  it('run <file> executes a cell against the built-in tools in the current folder', async () => {
    writeFileSync(
      join(workspace, 'cell.ts'),
      `const read: { output: string } = await tools.exec_command({ cmd: 'cat hello.txt' });\ntext(read.output.trim());\nconst t = await tools.clock__curr_time();\ntext(typeof t.unix_ms);\n`,
    );
    const result = await runCli(['run', 'cell.ts']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Script completed\nWall time \d+\.\d seconds\nhello from a file\nnumber\n$/);
  });

  it('run - reads the cell from stdin', async () => {
    const result = await runCli(['run', '-'], "text('from stdin'); store('k', 1); text(load('k'));");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Script completed\nWall time \d+\.\d seconds\nfrom stdin\n1\n$/);
  });

  it('a syntax error fails the script with exit code 1', async () => {
    const result = await runCli(['run', '-'], 'text(;');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Script failed\nWall time \d+\.\d seconds\nScript error:\n.*SyntaxError/s);
  });

  it('a yield is followed by wait until the cell completes', async () => {
    // yield_control() makes the first observation independent of how long the cell takes to start
    const result = await runCli(['run', '-', '--yield-time-ms', '5000'], "text('before');\nyield_control();\nawait new Promise((r) => setTimeout(r, 400));\ntext('after');");
    expect(result.code).toBe(0);
    // a wait may also yield (after 5 s) before completion on a slow machine
    const match = /^Script running with cell ID (\S+)\nWall time \d+\.\d seconds\nbefore\n(Script running with cell ID \1\nWall time \d+\.\d seconds\n)*Script completed\nWall time \d+\.\d seconds\nafter\n$/.exec(result.stdout);
    expect(match, result.stdout).not.toBeNull();
  });

  it('--cpu-time-ms and --wall-time-ms bound a non-interactive run; bad values are usage errors', async () => {
    const spin = await runCli(['run', '-', '--yield-time-ms', '200', '--cpu-time-ms', '700'], "text('spinning');\nwhile (true) {}\n");
    expect(spin.code).toBe(1);
    expect(spin.stdout).toMatch(/Script failed\nWall time \d+\.\d seconds\n(.*\n)*.*exec cell exceeded its CPU time limit of 700 ms/);
    const idle = await runCli(['run', '-', '--yield-time-ms', '200', '--wall-time-ms', '900'], "text('idle');\nawait new Promise(() => {});\n");
    expect(idle.code).toBe(1);
    expect(idle.stdout).toMatch(/exec cell exceeded its wall time limit of 900 ms/);
    for (const [flag, value] of [['--cpu-time-ms', '0'], ['--wall-time-ms', 'soon']]) {
      const refused = await runCli(['run', '-', flag, value], "text('x')");
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(`switchyard: ${flag} must be a positive integer of milliseconds or false\n`);
    }
  });

  it('--interactive asks on each yield; "t" terminates the cell', async () => {
    writeFileSync(join(workspace, 'spin.js'), "text('spinning');\nyield_control();\nwhile (true) {}\n");
    const result = await runCli(['run', 'spin.js', '--yield-time-ms', '5000', '--interactive'], 't\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Script running with cell ID \S+\nWall time \d+\.\d seconds\nspinning\n\[w\]ait or \[t\]erminate\? Script terminated\n/);
  });

  it('plan --json prints the two tables as JSON', async () => {
    const result = await runCli(['plan', '--json', '--mode', 'code-mode']);
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as { mode: string; tools: Array<{ type: string; name: string }>; rows: Array<{ name: string; visible: boolean; callableFromCode: boolean }> };
    expect(plan.mode).toBe('code-mode');
    expect(plan.tools.map((tool) => tool.name)).toEqual(['exec', 'wait', 'clock', 'get_context_remaining', 'apply_patch', 'exec_command', 'write_stdin']);
    expect(plan.rows.find((row) => row.name === 'exec_command')).toMatchObject({ visible: true, callableFromCode: true });
  });

  it('demo prints the transcript of a Code Mode turn using all four built-ins and exits 0', async () => {
    const result = await runCli(['demo']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain('The two tables (mode code-mode-only)');
    expect(out).toMatch(/exec\s+custom\s+direct-model-only\s+yes\s+yes\s+no/);
    expect(out).toMatch(/exec_command\s+function\s+direct\s+no\s+yes\s+yes/);
    for (const tool of ['exec_command', 'apply_patch', 'clock__curr_time', 'get_context_remaining']) expect(out).toMatch(new RegExp(`cell \\S+ tool-\\d+ → ${tool}`));
    expect(out).toContain('hook PreToolUse Bash: block — recursive deletes are not allowed here');
    expect(out).toContain('refused: Command blocked by PreToolUse hook: recursive deletes are not allowed here. Command: rm -rf notes.txt');
    expect(out).toMatch(/← \[call-exec\] Script running with cell ID \S+/);
    expect(out).toMatch(/← \[call-wait\] Script completed\n {4}after the yield: status: reviewed \(stored \d{4}-\d\d-\d\dT/);
    expect(out).toMatch(/cell \S+… started\n[\s\S]*cell \S+… completed\n← \[call-wait\]/);
    expect(out).toMatch(/demo ok\n$/);
  });

  it('demo --model without credentials says so and runs the scripted model', async () => {
    const child = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
      delete env.OPENAI_API_KEY;
      const proc = spawn(bin, ['demo', '--model', 'openai:gpt-test'], { cwd: workspace, env });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (chunk) => (stdout += chunk));
      proc.stderr.on('data', (chunk) => (stderr += chunk));
      proc.on('close', (code) => resolve({ code, stdout, stderr }));
      proc.stdin.end();
    });
    expect(child.stderr).toBe('switchyard: no credentials for openai:gpt-test; running the scripted model\n');
    expect(child.code).toBe(0);
    expect(child.stdout).toMatch(/demo ok\n$/);
    const bad = await runCli(['demo', '--model', 'nonsense']);
    expect(bad.code).toBe(2);
  });

  it('mcp serve answers an MCP client over stdio with exec and wait', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: bin, args: ['mcp', 'serve'], cwd: workspace, stderr: 'pipe' }));
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toEqual(['exec', 'wait']);
      const result = (await client.callTool({ name: 'exec', arguments: { code: "text('over mcp ' + (await tools.get_context_remaining()).tokens_left)" } })) as {
        content: Array<{ type: string; text: string }>;
        isError?: boolean;
      };
      expect(result.isError ?? false).toBe(false);
      expect(result.content[0].text).toMatch(/^Script completed\n/);
      expect(result.content[1].text).toMatch(/^over mcp (null|\d+)$/);
    } finally {
      await client.close();
    }
  });

  it('SIGTERM kills the unsandboxed processes a cell started before the CLI ends', async () => {
    const cell = `await tools.exec_command({ cmd: 'echo $$ > child.pid; exec sleep 1000', yield_time_ms: 500 });\ntext('started');\nawait new Promise(() => {});`;
    const child = spawn(bin, ['run', '-', '--sandbox', 'danger-full-access', '--yield-time-ms', '1000'], { cwd: workspace, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stdin.end(cell);
    const deadline = Date.now() + 45_000;
    while (!stdout.includes('started') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(stdout).toContain('started');
    const pid = Number(readFileSync(join(workspace, 'child.pid'), 'utf8'));
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    const closed = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    child.kill('SIGTERM');
    expect(await closed).toBe('SIGTERM');
    const gone = Date.now() + 3_000;
    while (existsSync(`/proc/${pid}`) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });

  it('without bubblewrap, run / demo / mcp serve refuse and name it; --sandbox danger-full-access runs', async () => {
    // A PATH with what the CLI needs, but no bwrap.
    const binDir = mkdtempSync(join(tmpdir(), 'switchyard-cli-path-'));
    for (const tool of ['sh', 'bash', 'cat', 'perl', 'env']) {
      const found = ['/usr/bin', '/bin'].map((dir) => join(dir, tool)).find((path) => existsSync(path));
      if (found) symlinkSync(found, join(binDir, tool));
    }
    symlinkSync(process.execPath, join(binDir, 'node'));
    const env = { ...process.env, PATH: binDir };
    const refusal =
      'switchyard: the workspace-write sandbox cannot start (missing: bubblewrap): bubblewrap (bwrap) was not found. Fix: install bubblewrap, or pass --sandbox danger-full-access to run without a sandbox.\n';
    writeFileSync(join(workspace, 'cat.ts'), `text((await tools.exec_command({ cmd: 'cat hello.txt' })).output.trim());\n`);
    const commands = [['run', 'cat.ts'], ['demo'], ['mcp', 'serve']];
    const [refusals, readOnly, unsandboxed] = await Promise.all([
      Promise.all(commands.map((args) => runCli(args, '', env))),
      runCli(['run', 'cat.ts', '--sandbox', 'read-only'], '', env),
      runCli(['run', 'cat.ts', '--sandbox', 'danger-full-access'], '', env),
    ]);
    refusals.forEach((refused, index) => {
      const args = commands[index];
      expect({ args, code: refused.code, stderr: refused.stderr, stdout: refused.stdout }).toEqual({ args, code: 2, stderr: refusal, stdout: '' });
    });
    expect(readOnly.stderr).toContain('the read-only sandbox cannot start (missing: bubblewrap)');
    expect(unsandboxed.stderr).toBe('');
    expect(unsandboxed.stdout).toMatch(/^Script completed\nWall time \d+\.\d seconds\nhello from a file\n$/);
    rmSync(binDir, { recursive: true, force: true });
  }, 90_000);

  it('usage errors exit 2 with a message', async () => {
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const badMode = await runCli(['plan', '--mode', 'sideways']);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toBe('switchyard: --mode must be one of direct, code-mode, code-mode-only\n');
  });
});
