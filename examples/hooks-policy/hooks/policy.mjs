// A PreToolUse / PostToolUse command hook: reads the hook payload on stdin, appends one line per
// call to the JSONL file named by $AUDIT_LOG, and denies any shell command containing `rm -rf`.
import { appendFileSync, readFileSync } from 'node:fs';

const payload = JSON.parse(readFileSync(0, 'utf8'));
const command = typeof payload.tool_input?.command === 'string' ? payload.tool_input.command : '';
const dangerous = payload.hook_event_name === 'PreToolUse' && /\brm\s+-rf\b/.test(command);

appendFileSync(
  process.env.AUDIT_LOG,
  JSON.stringify({
    event: payload.hook_event_name,
    tool: payload.tool_name,
    command,
    caller: payload.caller,
    callId: payload.tool_use_id,
    decision: dangerous ? 'deny' : 'allow',
  }) + '\n',
);

if (dangerous) {
  process.stdout.write(
    JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'recursive force-deletes are not allowed in this workspace',
      },
    }),
  );
}
