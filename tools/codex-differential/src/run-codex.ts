// Runs one case through the real Codex CLI: `codex exec --json` with a fresh CODEX_HOME whose only
// model provider is the mock Responses server, stdin from /dev/null and a clean HOME. The caller runs
// inside a network namespace that has only loopback, so nothing Codex sends can leave the machine.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DiffCase, SideRun } from './case.ts';
import { startMockResponses } from './mock-responses.ts';
import { makeWorkspace, readTree } from './workspace.ts';

/** Codex's bundled model catalog decides the tool table: gpt-5.5 has freeform apply_patch, gpt-5.6-sol is code-mode-only. */
const MODELS = { direct: 'gpt-5.5', 'code-mode': 'gpt-5.5', 'code-mode-only': 'gpt-5.6-sol' } as const;

export async function runCodex(binary: string, testCase: DiffCase): Promise<SideRun> {
  const mode = testCase.mode ?? 'direct';
  const mock = await startMockResponses(testCase.steps);
  const { base, workspace } = makeWorkspace('cx', testCase.files);
  const home = join(base, 'home');
  const codexHome = join(base, 'codex-home');
  const tmp = join(base, 'tmp');
  for (const dir of [home, codexHome, tmp]) mkdirSync(dir);
  writeFileSync(join(codexHome, 'config.toml'), configToml(MODELS[mode], mock.baseURL, testCase));
  if (testCase.hooks) writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify(testCase.hooks, null, 2));
  const features = [
    ...(mode !== 'direct' ? ['code_mode'] : []),
    ...(mode === 'code-mode-only' ? ['code_mode_only'] : []),
    ...(testCase.clock ? ['current_time_reminder'] : []),
    ...(testCase.context ? ['token_budget'] : []),
  ];
  const args = [
    'exec',
    '--skip-git-repo-check',
    '--ephemeral',
    '--json',
    '-s',
    testCase.sandbox ?? 'danger-full-access',
    '-C',
    workspace,
    ...features.flatMap((feature) => ['--enable', feature]),
    // the case's hooks.json is ours: run it without Codex's interactive trust review
    ...(testCase.hooks ? ['--dangerously-bypass-hook-trust'] : []),
    'hello',
  ];
  const child = spawn(binary, args, {
    cwd: workspace,
    // TMPDIR elsewhere than CODEX_HOME's folder: Codex refuses to put its helper links (the
    // sandbox launcher among them) in a CODEX_HOME under the temporary folder.
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, CODEX_HOME: codexHome, TMPDIR: tmp, OPENAI_API_KEY: 'sk-test', LANG: 'C.UTF-8' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  let stdout = '';
  let stderr = '';
  // After its turn, `codex exec` spends seconds on background plugin syncs that fail offline: the
  // turn's end on the JSON event stream is the end of the run.
  let ended: string | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    ended ??= /"type":"turn\.completed"/.test(stdout) ? 'ok' : /"type":"turn\.failed"/.test(stdout) ? 'turn failed' : undefined;
    if (ended) kill('SIGKILL');
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => kill('SIGKILL'), (testCase.timeoutSeconds ?? 90) * 1000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (exit) => resolve(exit)));
  clearTimeout(timer);
  await mock.close();
  const files = testCase.compareFiles ? readTree(workspace) : undefined;
  rmSync(base, { recursive: true, force: true });
  return {
    requests: mock.requests,
    files,
    workspace,
    outcome: ended ?? (code === 0 ? 'ok' : `exit ${code ?? 'killed'}`),
    log: `${stderr}\n${stdout}`.trim(),
  };
}

function configToml(model: string, baseURL: string, testCase: DiffCase): string {
  return [
    `model = "${model}"`,
    'model_provider = "mock"',
    'approval_policy = "never"',
    ...(testCase.context ? ['model_context_window = 10000', 'model_auto_compact_token_limit = 9000'] : []),
    '',
    '[model_providers.mock]',
    'name = "mock"',
    `base_url = "${baseURL}"`,
    'wire_api = "responses"',
    'env_key = "OPENAI_API_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
}
