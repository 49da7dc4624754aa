// The conformance suite's server fixture tools, played by Code Mode cells of `switchyard mcp
// serve` (which offers only `exec` and `wait`): each becomes the `exec` of a script. A tool that
// should become a task yields (a short `yield_time_ms` pragma) and keeps running; one that needs the
// user's input makes a nested call that asks approval (an escalated `exec_command`, under
// `--approval-policy on-request`): that is the in-cell approval serve surfaces as `input_required`.
// Tools no script can play are not translated (serve answers them as unknown tools); the test's
// baseline names the checks they fail, and the @switchyard/mcp README says why.

/** A pragma making the cell yield (and so the call become a task) after `ms`. */
const yieldAfter = (ms: number) => `// @exec: {"yield_time_ms": ${ms}}\n`;
const sleepLine = (ms: number) => `await new Promise((resolve) => setTimeout(resolve, ${ms}));\n`;
/** A nested call that asks the client to approve it (`confirm` names what is approved). */
const approval = (confirm: string) =>
  `tools.exec_command({ cmd: ${JSON.stringify(`echo ${JSON.stringify(confirm)}`)}, sandbox_permissions: "require_escalated", justification: ${JSON.stringify(`confirm: ${confirm}`)} })`;

const seconds = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 1);
const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value ?? ''));

/** The script of a fixture tool, or `undefined` for a name that is not one of them. */
export function fixtureScript(name: string, args: Record<string, unknown>): string | undefined {
  switch (name) {
    // sync-only: ends within the call, so the answer is a plain result
    case 'greet':
      return `text(${JSON.stringify(`Hello, ${asText(args.name)}!`)});`;
    // task-supporting: sleeps `seconds` (0 ends within the call: the immediate path)
    case 'slow_compute':
      return `${yieldAfter(200)}${sleepLine(seconds(args.seconds) * 1000)}text(${JSON.stringify(`computed ${asText(args.label)}`)});`;
    // task-supporting: a tool error (isError) after about a second
    case 'failing_job':
      return `${yieldAfter(200)}${sleepLine(1000)}throw new Error("failing_job failed, as it always does");`;
    // task-supporting: parks on one approval once it runs as a task
    case 'confirm_delete':
      return `${yieldAfter(200)}${sleepLine(500)}const answer = await ${approval(`delete ${asText(args.filename)}`)};\ntext("deleted " + ${JSON.stringify(asText(args.filename))});`;
    // task-supporting: two approvals at once
    case 'multi_input':
      return `${yieldAfter(200)}${sleepLine(500)}await Promise.all([${approval('first input')}, ${approval('second input')}]);\ntext("both inputs received");`;
    // asks first (before any task exists: an input_required round trip), then runs long as a task
    case 'test_tool_with_task':
      return `${yieldAfter(1500)}await ${approval('start the task')};\n${sleepLine(3000)}text("task finished");`;
    default:
      return undefined;
  }
}
