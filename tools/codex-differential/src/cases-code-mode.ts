import { cellIdOf, custom, fn, type DiffCase } from './case.ts';

const exec = (callId: string, source: string) => custom(callId, 'exec', source);
/** A cell that calls tools: a 30 s yield, so a loaded machine's slow process start does not yield it early. */
const calling = (callId: string, source: string) => exec(callId, `// @exec: {"yield_time_ms": 30000}\n${source}`);
const wait = (callId: string, args: (cellId: string) => Record<string, unknown>) => (request: Parameters<typeof cellIdOf>[0]) => [
  fn(callId, 'wait', args(cellIdOf(request))),
];
const cm = (id: string, what: string, steps: DiffCase['steps'], extra: Partial<DiffCase> = {}): DiffCase => ({
  id: `code-mode/${id}`,
  what,
  mode: 'code-mode',
  steps,
  ...extra,
});

export const CODE_MODE_CASES: DiffCase[] = [
  cm('text', 'text() items, the code-mode tool table', [[exec('call_1', 'text("a"); text("b");')]], { compareTools: true }),
  cm('nested-exec', 'a nested exec_command result', [[calling('call_1', 'const r = await tools.exec_command({ cmd: "echo hi" }); text(JSON.stringify(r));')]]),
  cm('nested-exec-yield', 'a nested exec_command that yields', [[calling('call_1', 'const r = await tools.exec_command({ cmd: "sleep 1; echo x", yield_time_ms: 250 }); text(JSON.stringify(r));')]]),
  cm('nested-exec-error', 'a nested exec_command with bad arguments', [[calling('call_1', 'try { await tools.exec_command({}); } catch (e) { text(String(e)); }')]]),
  cm(
    'nested-patch',
    'a nested apply_patch',
    [[calling('call_1', 'const r = await tools.apply_patch("*** Begin Patch\\n*** Add File: n.txt\\n+hi\\n*** End Patch\\n"); text(JSON.stringify(r));')]],
    { compareFiles: true },
  ),
  cm('nested-patch-error', 'a nested apply_patch failing', [[calling('call_1', 'try { await tools.apply_patch("*** Begin Patch\\n*** Delete File: gone.txt\\n*** End Patch\\n"); } catch (e) { text(String(e)); }')]]),
  cm('nested-unknown', 'a nested call of a tool that does not exist', [[calling('call_1', 'try { await tools.nope({}); } catch (e) { text(String(e)); }')]]),
  cm('throw', 'an uncaught throw of a string', [[exec('call_1', 'throw "bad";')]]),
  cm('syntax-error', 'a syntax error', [[exec('call_1', 'let x = ;')]]),
  cm('yield-wait', 'yield_control, then wait', [[exec('call_1', 'text("a"); yield_control(); await new Promise((r) => setTimeout(r, 300)); text("b");')], wait('call_2', (cell) => ({ cell_id: cell }))]),
  cm('pragma-yield', 'a pragma yield, then wait', [[exec('call_1', '// @exec: {"yield_time_ms": 100}\nawait new Promise((r) => setTimeout(r, 800)); text("done");')], wait('call_2', (cell) => ({ cell_id: cell, yield_time_ms: 5000 }))]),
  cm('default-yield', 'a cell running 12 s without a pragma, then wait', [[exec('call_1', 'await new Promise((r) => setTimeout(r, 12000)); text("late");')], wait('call_2', (cell) => ({ cell_id: cell }))], { timeoutSeconds: 120 }),
  cm('terminate', 'wait with terminate', [[exec('call_1', '// @exec: {"yield_time_ms": 3000}\ntext("before"); await new Promise(() => {});')], wait('call_2', (cell) => ({ cell_id: cell, terminate: true }))]),
  cm('wait-unknown', 'wait on a cell that does not exist', [[fn('call_1', 'wait', { cell_id: 'nope' })]]),
  cm('notify', 'notify() during a cell', [[exec('call_1', 'notify("note"); text("out");')]]),
  cm('store-load', 'store in one cell, load in the next', [[exec('call_1', 'store("k", { a: [1, true, null] }); text("stored");')], [exec('call_2', 'text(JSON.stringify(load("k")));')]]),
  cm('pragma-bad-key', 'a pragma with an unsupported key', [[exec('call_1', '// @exec: {"foo": 1}\ntext("x");')]]),
  cm('pragma-bad-json', 'a pragma that is not JSON', [[exec('call_1', '// @exec: {yield\ntext("x");')]]),
  cm('pragma-only', 'a pragma with no source after it', [[exec('call_1', '// @exec: {"yield_time_ms": 10}\n')]]),
  cm('max-output', 'max_output_tokens truncating text()', [[exec('call_1', '// @exec: {"max_output_tokens": 10}\ntext("x".repeat(400));')]]),
  cm('exec-as-function', 'exec sent as a JSON function call, then a good call', [[fn('call_1', 'exec', '{"code":"text(1)"}')], [exec('call_2', 'text("after");')]]),
  cm('wait-as-custom', 'wait sent as a custom call', [[custom('call_1', 'wait', 'x')], [exec('call_2', 'text("after");')]]),
  cm('parallel-nested', 'nested calls in parallel', [[calling('call_1', 'const rs = await Promise.all(["one", "two"].map((w) => tools.exec_command({ cmd: "echo " + w }))); text(rs.map((r) => r.output).join(""));')]]),
  {
    id: 'code-mode-only/tools',
    what: 'the code-mode-only tool table and a nested call',
    mode: 'code-mode-only',
    compareTools: true,
    steps: [[calling('call_1', 'const r = await tools.exec_command({ cmd: "echo hi" }); text(r.output);')]],
  },
];
