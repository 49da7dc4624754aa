// The scripted conversations. Each step is one model response; ids are per case.
import { custom, fn, sessionIdOf, type DiffCase } from './case.ts';
import { CODE_MODE_CASES } from './cases-code-mode.ts';
import { PATCH_CASES } from './cases-patch.ts';

const exec = (callId: string, args: unknown) => fn(callId, 'exec_command', args);
const stdin = (callId: string, args: (sessionId: number) => unknown) => (request: Parameters<typeof sessionIdOf>[0]) => [
  fn(callId, 'write_stdin', args(sessionIdOf(request))),
];

const EXEC_CASES: DiffCase[] = [
  { id: 'exec/quick', what: 'echo, the direct tool table', compareTools: true, steps: [[exec('call_1', { cmd: 'echo hi' })]] },
  // a pause between the streams: two pipes have no order of their own
  { id: 'exec/failing', what: 'stderr and a non-zero exit', steps: [[exec('call_1', { cmd: 'echo out; sleep 0.3; echo err >&2; exit 3' })]] },
  { id: 'exec/no-output', what: 'a command that prints nothing', steps: [[exec('call_1', { cmd: 'true' })]] },
  {
    id: 'exec/yield-poll',
    what: 'a process that yields, then an empty write_stdin poll',
    steps: [[exec('call_1', { cmd: 'sleep 1; echo late', yield_time_ms: 250 })], stdin('call_2', (id) => ({ session_id: id, yield_time_ms: 3000 }))],
  },
  {
    id: 'exec/tty-stdin',
    what: 'a tty process reading what write_stdin sends',
    steps: [
      [exec('call_1', { cmd: 'read line; echo "got:$line"', tty: true, yield_time_ms: 500 })],
      stdin('call_2', (id) => ({ session_id: id, chars: 'abc\n', yield_time_ms: 5000 })),
    ],
  },
  {
    id: 'exec/pipe-stdin-closed',
    what: 'write_stdin to a process started without a tty',
    steps: [[exec('call_1', { cmd: 'sleep 2', yield_time_ms: 250 })], stdin('call_2', (id) => ({ session_id: id, chars: 'x\n' }))],
  },
  { id: 'exec/truncation', what: 'output over max_output_tokens', steps: [[exec('call_1', { cmd: 'seq 1 3000', max_output_tokens: 40 })]] },
  { id: 'exec/truncation-default', what: 'output over the default budget', steps: [[exec('call_1', { cmd: 'seq 1 12000' })]] },
  { id: 'exec/workdir', what: 'a relative workdir', files: { 'sub/a.txt': 'a\n' }, steps: [[exec('call_1', { cmd: 'ls; pwd', workdir: 'sub' })]] },
  { id: 'exec/workdir-missing', what: 'a workdir that does not exist', steps: [[exec('call_1', { cmd: 'pwd', workdir: 'nope' })]] },
  { id: 'exec/shell-sh', what: 'shell /bin/sh', steps: [[exec('call_1', { cmd: 'echo "$0"', shell: '/bin/sh' })]] },
  { id: 'exec/login-false', what: 'login false', steps: [[exec('call_1', { cmd: 'echo "$0"; shopt -q login_shell && echo login || echo nologin', login: false })]] },
  { id: 'exec/login-default', what: 'login left out', steps: [[exec('call_1', { cmd: 'echo "$0"' })]] },
  { id: 'exec/login-true', what: 'login true', steps: [[exec('call_1', { cmd: 'echo "$0"', login: true })]] },
  { id: 'exec/unknown-property', what: 'a stray timeout_ms property', steps: [[exec('call_1', { cmd: 'echo ran', timeout_ms: 1000 })]] },
  { id: 'exec/write-stdin-unknown', what: 'write_stdin to a session that does not exist', steps: [[fn('call_1', 'write_stdin', { session_id: 424242, chars: 'x' })]] },
  {
    id: 'exec/escalation-never',
    what: 'require_escalated under approval policy never',
    steps: [[exec('call_1', { cmd: 'echo hi', sandbox_permissions: 'require_escalated', justification: 'need it' })]],
  },
];

const ARGUMENT_CASES: DiffCase[] = [
  { id: 'args/missing-cmd', what: 'exec_command without cmd', steps: [[fn('call_1', 'exec_command', '{}')]] },
  { id: 'args/cmd-number', what: 'cmd is a number', steps: [[fn('call_1', 'exec_command', '{"cmd":5}')]] },
  { id: 'args/eof', what: 'truncated JSON', steps: [[fn('call_1', 'exec_command', '{"cmd": ')]] },
  { id: 'args/not-json', what: 'not JSON at all', steps: [[fn('call_1', 'exec_command', 'echo hi')]] },
  { id: 'args/trailing', what: 'trailing characters after the object', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi"} x')]] },
  { id: 'args/yield-string', what: 'yield_time_ms as a string', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi","yield_time_ms":"5"}')]] },
  { id: 'args/tty-string', what: 'tty as a string', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi",\n"tty":"yes"}')]] },
  { id: 'args/yield-negative', what: 'a negative yield_time_ms', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi","yield_time_ms":-1}')]] },
  { id: 'args/yield-float', what: 'a fractional yield_time_ms', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi","yield_time_ms":1.5}')]] },
  { id: 'args/max-output-string', what: 'max_output_tokens as a string', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi","max_output_tokens":"9"}')]] },
  { id: 'args/unknown-variant', what: 'an unknown sandbox_permissions', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi","sandbox_permissions":"x"}')]] },
  { id: 'args/duplicate', what: 'cmd given twice', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo a","cmd":"echo b"}')]] },
  { id: 'args/prefix-rule-number', what: 'a number in prefix_rule', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi","prefix_rule":["echo",1]}')]] },
  { id: 'args/trailing-comma', what: 'a trailing comma', steps: [[fn('call_1', 'exec_command', '{"cmd":"echo hi",}')]] },
  { id: 'args/write-stdin-missing', what: 'write_stdin without session_id', steps: [[fn('call_1', 'write_stdin', '{"chars":"x"}')]] },
  { id: 'args/write-stdin-string-id', what: 'session_id as a string', steps: [[fn('call_1', 'write_stdin', '{"session_id":"7"}')]] },
];

const CALL_CASES: DiffCase[] = [
  {
    id: 'calls/apply-patch-as-function',
    what: 'apply_patch sent as a JSON function call, then a good call',
    steps: [[fn('call_1', 'apply_patch', '{"input":"*** Begin Patch\\n*** End Patch"}')], [exec('call_2', { cmd: 'echo after' })]],
  },
  {
    id: 'calls/exec-command-as-custom',
    what: 'exec_command sent as a custom call, then a good call',
    steps: [[custom('call_1', 'exec_command', 'echo hi')], [exec('call_2', { cmd: 'echo after' })]],
  },
  { id: 'calls/unknown-function', what: 'a function the table does not have', steps: [[fn('call_1', 'no_such_tool', '{}')]] },
  { id: 'calls/unknown-custom', what: 'a custom tool the table does not have', steps: [[custom('call_1', 'no_such_tool', 'x')]] },
  {
    id: 'calls/parallel',
    what: 'three calls in one response, answered in call order',
    steps: [[exec('call_1', { cmd: 'sleep 0.3; echo one' }), exec('call_2', { cmd: 'echo two' }), exec('call_3', { cmd: 'echo three' })]],
  },
];

const TOOL_CASES: DiffCase[] = [
  { id: 'clock/curr-time', what: 'clock.curr_time and the clock namespace', clock: true, compareTools: true, steps: [[fn('call_1', 'curr_time', '{}', 'clock')]] },
  { id: 'context/remaining', what: 'get_context_remaining', context: true, compareTools: true, steps: [[fn('call_1', 'get_context_remaining', '{}')]] },
];

const SANDBOX_CASES: DiffCase[] = [
  { id: 'sandbox/read-only-write', what: 'a write under the read-only sandbox', sandbox: 'read-only', steps: [[exec('call_1', { cmd: 'touch made.txt; echo rc=$?' })]] },
  { id: 'sandbox/workspace-write', what: 'a write in the workspace under workspace-write', sandbox: 'workspace-write', compareFiles: true, steps: [[exec('call_1', { cmd: 'echo x > made.txt; cat made.txt' })]] },
];

const HOOK_CASES: DiffCase[] = [
  {
    id: 'hooks/pre-deny',
    what: 'a PreToolUse hook denying Bash',
    hooks: { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no shells"}}'` }] }] } },
    steps: [[exec('call_1', { cmd: 'echo hi' })]],
  },
  {
    id: 'hooks/post-block',
    what: 'a PostToolUse hook replacing the output',
    hooks: { hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `printf '%s' '{"decision":"block","reason":"output withheld"}'` }] }] } },
    steps: [[exec('call_1', { cmd: 'echo hi' })]],
  },
];

export const CASES: DiffCase[] = [
  ...EXEC_CASES,
  ...ARGUMENT_CASES,
  ...CALL_CASES,
  ...PATCH_CASES,
  ...CODE_MODE_CASES,
  ...TOOL_CASES,
  ...SANDBOX_CASES,
  ...HOOK_CASES,
];

