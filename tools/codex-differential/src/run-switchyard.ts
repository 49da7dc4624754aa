// Runs one case through Switchyard as a host would: a session with the built-in tools, the
// Responses client of @switchyard/openai against the same mock server, the same script.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHookEngine } from '@switchyard/hooks';
import { openaiResponses } from '@switchyard/openai';
import { errorMessage, type ToolExecutor } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { clockTool } from '@switchyard/tool-clock';
import { contextRemainingTool } from '@switchyard/tool-context-remaining';
import { execTools } from '@switchyard/tool-exec';
import type { DiffCase, SideRun } from './case.ts';
import { startMockResponses } from './mock-responses.ts';
import { makeWorkspace, readTree } from './workspace.ts';

export async function runSwitchyard(testCase: DiffCase): Promise<SideRun> {
  const mock = await startMockResponses(testCase.steps);
  const { base, workspace } = makeWorkspace('sy', testCase.files);
  const sandbox = testCase.sandbox ?? 'danger-full-access';
  const exec = execTools({ root: workspace, sandbox, approvalPolicy: 'never', allowLoginShell: true, shell: '/bin/bash' });
  // the reference's order: the shell tools, the utilities, then apply_patch
  const tools: ToolExecutor[] = [
    ...exec,
    ...(testCase.clock ? [clockTool()] : []),
    ...(testCase.context ? [contextRemainingTool()] : []),
    applyPatchTool({ root: workspace, sandbox: { mode: sandbox } }),
  ];
  let hooks;
  if (testCase.hooks) {
    const dir = join(base, 'hooks');
    mkdirSync(dir);
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify(testCase.hooks));
    hooks = createHookEngine({ configFiles: [join(dir, 'hooks.json')], shell: '/bin/bash', loginShell: true });
  }
  const session = createSession({
    toolMode: testCase.mode ?? 'direct',
    tools,
    cwd: workspace,
    approvalPolicy: 'never',
    sandboxMode: sandbox,
    // the reference has no tool-table budget: every tool stays visible, described in full
    toolBudget: { tokens: Infinity },
    ...(hooks ? { hooks } : {}),
    ...(testCase.context ? { model: { contextWindow: 10_000, autoCompactTokens: 9_000 } } : {}),
  });
  let outcome = 'ok';
  let log = '';
  try {
    const model = openaiResponses({ baseURL: mock.baseURL, model: 'gpt-5.5', apiKey: 'sk-test', maxAttempts: 1 });
    await session.runTurn({ model, input: 'hello' });
  } catch (error) {
    outcome = `error: ${errorMessage(error)}`;
    log = error instanceof Error ? (error.stack ?? error.message) : String(error);
  } finally {
    await session.shutdown();
    await exec.shutdown();
    await mock.close();
  }
  const files = testCase.compareFiles ? readTree(workspace) : undefined;
  rmSync(base, { recursive: true, force: true });
  return { requests: mock.requests, files, workspace, outcome, log };
}
