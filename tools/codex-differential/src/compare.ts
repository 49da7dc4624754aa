// What the model sees, from the requests the mock received: the items each request adds after the
// model's own output (tool outputs, hook context, injected messages), the number of requests (did
// the turn go on?), the tool table, and optionally the workspace's files. Normalized only where the
// two runs must differ: times, chunk and cell ids, process session ids, the workspace path.
import type { DiffCase, SideRun } from './case.ts';
import type { RecordedRequest } from './mock-responses.ts';

/** One compared observation: a label and its normalized text on each side. */
export interface Observation {
  key: string;
  codex: string | undefined;
  switchyard: string | undefined;
}

const MODEL_OUTPUT_TYPES = new Set(['function_call', 'custom_tool_call', 'reasoning', 'tool_search_call', 'additional_tools']);

/** Items the model did not write, in order, that request `index` adds to the previous request's input. */
export function addedItems(requests: readonly RecordedRequest[], index: number): Array<Record<string, unknown>> {
  const previous = index === 0 ? 0 : requests[index - 1]!.input.length;
  return requests[index]!.input.slice(previous).filter((item) => {
    if (MODEL_OUTPUT_TYPES.has(String(item.type))) return false;
    return !(item.type === 'message' && item.role === 'assistant');
  });
}

/** Replaces what legitimately differs between two runs of the same script. */
export function normalize(text: string, workspace: string): string {
  let out = text.split(workspace).join('<ws>');
  out = out.replace(/\/tmp\/codex-diff-(?:cx|sy)-[A-Za-z0-9]+\/ws/g, '<ws>');
  out = out.replace(/Wall time: \d+(?:\.\d+)? seconds/g, 'Wall time: <t> seconds');
  out = out.replace(/Wall time \d+(?:\.\d+)? seconds/g, 'Wall time <t> seconds');
  out = out.replace(/"wall_time_seconds\\?":\s*[\d.e-]+/g, (match) => match.replace(/[\d.e-]+$/, '<t>'));
  out = out.replace(/Chunk ID: [0-9a-f]+/g, 'Chunk ID: <chunk>');
  out = out.replace(/"chunk_id\\?":\s*\\?"[0-9a-f]+\\?"/g, (match) => match.replace(/[0-9a-f]+(\\?")$/, '<chunk>$1'));
  out = out.replace(/session ID \d+/g, 'session ID <sid>');
  out = out.replace(/"session_id\\?":\s*\d+/g, (match) => match.replace(/\d+$/, '<sid>'));
  out = out.replace(/Unknown process id \d+/g, 'Unknown process id <sid>');
  out = out.replace(/cell ID [A-Za-z0-9_-]+/g, 'cell ID <cell>');
  out = out.replace(/exec cell [A-Za-z0-9_-]+ /g, 'exec cell <cell> ');
  out = out.replace(/It is \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\./g, 'It is <now> UTC.');
  return out;
}

/** An item as compared: an `id` the sender gave it stays visible, its value normalized. */
function itemText(item: Record<string, unknown>): string {
  return JSON.stringify('id' in item ? { ...item, id: '<id>' } : item, null, 1);
}

/** Every observation of one case, paired side by side. */
export function observe(testCase: DiffCase, codex: SideRun, switchyard: SideRun): Observation[] {
  const observations: Observation[] = [];
  const count = Math.max(codex.requests.length, switchyard.requests.length);
  observations.push({ key: 'requests', codex: String(codex.requests.length), switchyard: String(switchyard.requests.length) });
  for (let index = 1; index < count; index++) {
    const codexItems = index < codex.requests.length ? addedItems(codex.requests, index) : [];
    const ourItems = index < switchyard.requests.length ? addedItems(switchyard.requests, index) : [];
    const width = Math.max(codexItems.length, ourItems.length);
    for (let position = 0; position < width; position++) {
      const a = codexItems[position];
      const b = ourItems[position];
      observations.push({
        key: `request ${index + 1} item ${position + 1}${labelOf(a ?? b)}`,
        codex: a && normalize(itemText(a), codex.workspace),
        switchyard: b && normalize(itemText(b), switchyard.workspace),
      });
    }
  }
  if (testCase.compareTools) observations.push(...compareTools(codex, switchyard));
  if (testCase.compareFiles) {
    observations.push({ key: 'files', codex: JSON.stringify(codex.files, null, 1), switchyard: JSON.stringify(switchyard.files, null, 1) });
  }
  return observations;
}

function labelOf(item: Record<string, unknown> | undefined): string {
  if (!item) return '';
  if (typeof item.call_id === 'string') return ` (${String(item.type)} ${item.call_id})`;
  return ` (${String(item.type)}${item.role ? ` ${String(item.role)}` : ''})`;
}

/**
 * The tool table: each tool Switchyard offers must be in Codex's table with the same JSON, key
 * order included, and the shared tools must come in the same order. Tools only Codex offers
 * (update_plan, request_user_input, view_image, web_search, tool_search) are Codex's, not
 * Switchyard built-ins; the report lists them.
 */
function compareTools(codex: SideRun, switchyard: SideRun): Observation[] {
  const codexTable = toolTable(codex.requests[0]);
  const ourTable = toolTable(switchyard.requests[0]);
  const codexTools = codexTable.tools;
  const ourTools = ourTable.tools;
  const nameOf = (tool: Record<string, unknown>) => String(tool.name ?? tool.type);
  const ourNames = ourTools.map(nameOf);
  const observations: Observation[] = [
    { key: 'tools: carried in', codex: codexTable.carrier, switchyard: ourTable.carrier },
    {
      key: 'tools: order',
      codex: codexTools.map(nameOf).filter((name) => ourNames.includes(name)).join(', '),
      switchyard: ourNames.join(', '),
    },
  ];
  for (const tool of ourTools) {
    const twin = codexTools.find((candidate) => nameOf(candidate) === nameOf(tool));
    // the description apart from the rest (schemas, grammar, key order), so a listed description
    // difference never hides one in the rest
    const { description, ...rest } = tool;
    const { description: twinDescription, ...twinRest } = twin ?? {};
    observations.push(
      { key: `tools: ${nameOf(tool)} description`, codex: twin && JSON.stringify(twinDescription), switchyard: JSON.stringify(description) },
      { key: `tools: ${nameOf(tool)}`, codex: twin && JSON.stringify(twinRest, null, 1), switchyard: JSON.stringify(rest, null, 1) },
    );
  }
  return observations;
}

/**
 * A request's tool table: the `tools` field, or — for a model Codex's catalog marks code-mode-only —
 * the `additional_tools` input item that carries it instead.
 */
function toolTable(request: RecordedRequest | undefined): { carrier: string; tools: Array<Record<string, unknown>> } {
  const item = request?.input.find((entry) => entry.type === 'additional_tools');
  if (item && Array.isArray(item.tools)) {
    const tools = item.tools as Array<Record<string, unknown>>;
    // newer versions wrap them in a `functions` namespace
    const functions = tools.find((tool) => tool.type === 'namespace' && tool.name === 'functions');
    if (functions && Array.isArray(functions.tools)) return { carrier: 'an additional_tools input item, in a functions namespace', tools: functions.tools as Array<Record<string, unknown>> };
    return { carrier: 'an additional_tools input item', tools };
  }
  return { carrier: 'the request\'s tools', tools: request?.tools ?? [] };
}

/** The names only Codex offers (for the report). */
export function codexOnlyTools(codex: SideRun, switchyard: SideRun): string[] {
  const nameOf = (tool: Record<string, unknown>) => String(tool.name ?? tool.type);
  const ours = new Set(toolTable(switchyard.requests[0]).tools.map(nameOf));
  return toolTable(codex.requests[0]).tools.map(nameOf).filter((name) => !ours.has(name));
}
