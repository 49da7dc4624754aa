import { errorMessage } from '@switchyard/protocol';
import { runWithDeadline } from './deadline';
import type { ConfiguredFunctionHandler } from './hooks-config';
import type { HandlerRunResult } from './hook-output';
import type { HookInput } from './hook-payload';

/**
 * Runs an in-process handler with a command hook's semantics: it gets its own copy of the stdin
 * object (parsed from `inputJson`, exactly what a command reads), its return value stands for
 * stdout (exit 0), a throw or rejection is a failure, and at its timeout (or when the call is
 * cancelled) it is abandoned with its signal aborted (see {@link runWithDeadline}). Never rejects.
 */
export function runFunctionHook(handler: Pick<ConfiguredFunctionHandler, 'run' | 'timeoutSec'>, inputJson: string, signal: AbortSignal): Promise<HandlerRunResult> {
  return runWithDeadline(
    handler.timeoutSec,
    signal,
    async (own) => {
      const output = await handler.run(JSON.parse(inputJson) as HookInput, { signal: own });
      const stdout = output === undefined || output === null ? '' : JSON.stringify(output);
      return { exitCode: 0, stdout: stdout ?? '', stderr: '' };
    },
    (error) => `function hook failed: ${errorMessage(error)}`,
  );
}
