import type { PreludeLimits, PreludeTool } from './bridge';
import type { Send } from './channel';
import type { CellState } from './output';
import { PromiseOf, createNull, defineValue, parse, rejectWith, settledPromise, stringify, thenOf } from './primordials';
import { describeMessage, toolError } from './tool-error';
import { tooLargeText } from './values';

interface PendingCall {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  size: number;
}

/** Why a call's arguments are refused before it is sent, or undefined; `json` is undefined for no arguments. */
function refuseArguments(name: string, kind: PreludeTool['kind'], json: string | undefined, limits: PreludeLimits): string | undefined {
  if (json !== undefined && json.length > limits.maxValueChars) {
    return tooLargeText('the JSON of the arguments of tool `' + name + '`', json.length, limits.maxValueChars, limits.heapMb);
  }
  if (kind === 'freeform') {
    if (json === undefined || json.charCodeAt(0) !== 34) return 'tool `' + name + '` expects a string input';
  } else if (json !== undefined && json.charCodeAt(0) !== 123) {
    return 'tool `' + name + '` expects a JSON object for arguments';
  }
  return undefined;
}

/**
 * `tools.<name>(args)`: each call is a promise settled by the runtime (`resolve`). Calls a cell
 * starts in the same synchronous run leave together, as one `calls` message, once the run reaches
 * its next microtask checkpoint (so the runtime sees them in one tick and batches them).
 */
export function createTools(tools: readonly PreludeTool[], limits: PreludeLimits, state: CellState, send: Send) {
  const pending = createNull<PendingCall>();
  let inFlight = 0;
  let inFlightChars = 0;
  let callSequence = 0;
  let queuedCalls: string[] = [];
  let queuedCount = 0;
  function flushCalls(): void {
    const batch = queuedCalls;
    const count = queuedCount;
    queuedCalls = [];
    queuedCount = 0;
    if (!state.finished && count > 0) send('calls', batch);
  }
  // Elements are defined, not assigned: a setter the cell put on Array.prototype never sees them.
  function queueCall(id: string, name: string, json: string): void {
    defineValue(queuedCalls, queuedCount++, id);
    defineValue(queuedCalls, queuedCount++, name);
    defineValue(queuedCalls, queuedCount++, json);
    if (queuedCount === 3) thenOf(settledPromise, flushCalls);
  }
  function call(name: string, json: string): Promise<unknown> {
    if (state.finished) return new PromiseOf(() => {});
    if (inFlight >= limits.maxInFlightCalls) {
      return rejectWith(toolError('tool `' + name + '` was not called: this cell already has ' + limits.maxInFlightCalls + ' nested tool calls in flight (limit)'));
    }
    if (inFlightChars + json.length > limits.maxInFlightArgumentChars) {
      return rejectWith(
        toolError(`tool \`${name}\` was not called: its arguments (${json.length} characters of JSON) would bring the nested-call arguments in flight in this cell over ${limits.maxInFlightArgumentChars} characters (limit)`),
      );
    }
    const id = 'tool-' + ++callSequence;
    const size = json.length;
    return new PromiseOf((resolve, reject) => {
      pending[id] = { resolve, reject, size };
      inFlight++;
      inFlightChars += size;
      queueCall(id, name, json);
    });
  }
  function makeTool(name: string, kind: PreludeTool['kind']) {
    return function (args?: unknown): Promise<unknown> {
      let json: string | undefined;
      if (args !== undefined) {
        try {
          json = stringify(args);
        } catch (error) {
          throw toolError(describeMessage(error));
        }
      }
      const refusal = refuseArguments(name, kind, json, limits);
      if (refusal !== undefined) return rejectWith(toolError(refusal));
      return call(name, json ?? '{}');
    };
  }
  /** The runtime settled call `id`: ok with the result's JSON, or failed with its text. */
  function settleCall(id: string, ok: boolean, payload: string | undefined): void {
    const entry = pending[id];
    if (entry === undefined) return;
    delete pending[id];
    inFlight--;
    inFlightChars -= entry.size;
    if (ok) entry.resolve(payload === undefined ? undefined : parse(payload));
    else entry.reject(toolError(payload));
  }
  const toolFunctions = {};
  const allTools: Array<Omit<PreludeTool, 'kind'>> = [];
  for (const tool of tools) {
    defineValue(toolFunctions, tool.name, makeTool(tool.name, tool.kind));
    allTools.push({ name: tool.name, description: tool.description, declaration: tool.declaration });
  }
  return { toolFunctions, allTools, flushCalls, settleCall };
}
