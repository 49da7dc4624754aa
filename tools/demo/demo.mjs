// Protocol-level demo (until the session package exists): builds a few example specs with the
// contract package and prints the two tables a plan would hold.
import { defineFunctionTool, defineFreeformTool, toWireTool, displayName, codeModeName } from '@switchyard/protocol';

const tools = [
  defineFunctionTool({ name: 'curr_time', namespace: 'clock', description: 'Return the current time in UTC.', parameters: { type: 'object', properties: {} }, handle: () => 'now' }),
  defineFunctionTool({ name: 'get_weather', namespace: 'weather__', description: 'Current weather for a city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, supportsParallelToolCalls: true, handle: () => ({ tempC: 21 }) }),
  defineFreeformTool({ name: 'apply_patch', description: 'Edit files with a patch.', grammar: { syntax: 'lark', definition: 'start: /.+/' }, handle: () => 'ok' }),
];
const rows = tools.map((t) => [displayName(t.name), t.spec.type, t.exposure ?? 'direct', codeModeName(t.name), t.supportsParallelToolCalls ? 'yes' : 'no']);
const header = ['tool', 'kind', 'exposure', 'code-mode name', 'parallel'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of rows) console.log(line(row));
console.log('\nwire JSON of the first spec:', JSON.stringify(toWireTool(tools[0].spec)));
