import type { ApprovalDecision, ToolCallItem, ToolOutputItem } from '@switchyard/protocol';
import type { CodeModeMcpHost, CodeModeMcpServer } from '../src/serve';

/** The status header of a Code Mode output item, as the tests' hosts write it. */
export const header = (status: string) => ({ type: 'input_text' as const, text: `${status}\nWall time 0.1 seconds\nOutput:\n` });

/**
 * A host with one cell `7`: `exec` yields at once (`before`) unless its code is `quick`; `wait`
 * ends when `finish` is called. With `ask`, the exec call first asks the server for an approval
 * (as a nested call of the cell would) and reports the decision in its output.
 */
export function cellHost(options: { ask?: boolean } = {}) {
  const received: ToolCallItem[] = [];
  const decisions: ApprovalDecision[] = [];
  let served: CodeModeMcpServer | undefined;
  let finish!: (outcome: 'completed' | 'failed' | 'host-error') => void;
  const ended = new Promise<'completed' | 'failed' | 'host-error'>((resolve) => (finish = resolve));
  const host: CodeModeMcpHost = {
    describe: () => ({
      exec: { type: 'custom', name: 'exec', description: 'Run JavaScript.' },
      wait: { type: 'function', name: 'wait', description: 'Waits on a cell.', parameters: { type: 'object', properties: { cell_id: { type: 'string' } } } },
    }),
    dispatch: async (item, { signal }): Promise<ToolOutputItem> => {
      received.push(item);
      if (item.type === 'custom_tool_call') {
        if (item.input === 'quick') return { type: 'custom_tool_call_output', call_id: item.call_id, output: [header('Script completed'), { type: 'input_text', text: 'Hello, World!' }] };
        if (options.ask) {
          const decision = await served!.requestApproval({ kind: 'exec', toolName: 'exec_command', callId: 'nested-1', command: 'rm notes.txt', signal }, { execCallId: item.call_id, cellId: '7' });
          decisions.push(decision);
          if (item.input === 'ask-then-finish') return { type: 'custom_tool_call_output', call_id: item.call_id, output: [header('Script completed'), { type: 'input_text', text: decision }] };
        }
        return { type: 'custom_tool_call_output', call_id: item.call_id, output: [header('Script running with cell ID 7'), { type: 'input_text', text: 'before' }] };
      }
      const args = JSON.parse((item as { arguments: string }).arguments) as { terminate?: boolean };
      if (args.terminate) return { type: 'function_call_output', call_id: item.call_id, output: [header('Script terminated')] };
      const outcome = await Promise.race([ended, new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))]);
      if (outcome === 'host-error') throw new Error('the runtime went away');
      const text = outcome === 'completed' ? 'after' : 'Script error:\nboom';
      return { type: 'function_call_output', call_id: item.call_id, output: [header(outcome === 'completed' ? 'Script completed' : 'Script failed'), { type: 'input_text', text }] };
    },
  };
  return { host, received, decisions, finish, attach: (server: CodeModeMcpServer) => (served = server) };
}

