/**
 * plugin-executor: a tool from another package (`weather-plugin/`, which depends on the contract
 * `@switchyard/protocol` as a peer and on the leaf `@switchyard/kit` alone) loaded into a session twice — called directly by the model, where
 * the result is JSON text, and from a Code Mode cell, where the same result is a typed value.
 * Asserts both and exits 0.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { CustomToolCallOutputItem, FunctionCallOutputItem, ResponseItem } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { weather } from '@switchyard/example-weather-plugin';

const isCallOutput = (item: ResponseItem): item is FunctionCallOutputItem | CustomToolCallOutputItem =>
  item.type === 'function_call_output' || item.type === 'custom_tool_call_output';

const texts = (item: FunctionCallOutputItem | CustomToolCallOutputItem) =>
  typeof item.output === 'string' ? [item.output] : item.output.map((part) => ('text' in part ? part.text : part.image_url));

// 0. The plugin package shares the contract with its host as a peer and depends on the kit alone.
const plugin = JSON.parse(readFileSync(new URL('./weather-plugin/package.json', import.meta.url), 'utf8'));
assert.deepEqual(Object.keys(plugin.peerDependencies ?? {}), ['@switchyard/protocol']);
assert.deepEqual(Object.keys(plugin.dependencies ?? {}), ['@switchyard/kit']);

// 1. Direct: the model sees the plugin's namespace and calls it; outputs are JSON text.
const direct = createSession({ toolMode: 'direct', tools: [weather] });
try {
  const call = (callId: string, args: object): ResponseItem => ({
    type: 'function_call',
    call_id: callId,
    namespace: 'weather__',
    name: 'get_weather',
    arguments: JSON.stringify(args),
  });
  const model = createScriptedModel([
    [call('call-oslo', { city: 'Oslo' }), call('call-atlantis', { city: 'Atlantis' }), call('call-bad', { town: 'Oslo' })],
    [{ type: 'message', role: 'assistant', content: 'It is -3 °C and snowing lightly in Oslo.' }],
  ]);
  const result = await direct.runTurn({ model, input: 'What is the weather in Oslo?' });

  // The model's table: the plugin's namespace with its one function (the output schema stays host-side).
  assert.deepEqual(model.requests[0].tools, [
    {
      type: 'namespace',
      name: 'weather__',
      description: 'Weather readings.',
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Current weather for a city.',
          strict: false,
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        },
      ],
    },
  ]);
  // JSON text for the model; a plugin failure and bad arguments are model-visible outputs, not crashes.
  assert.deepEqual(result.items.filter(isCallOutput), [
    { type: 'function_call_output', call_id: 'call-oslo', output: '{"city":"Oslo","tempC":-3,"conditions":"light snow"}' },
    { type: 'function_call_output', call_id: 'call-atlantis', output: 'tool weather__get_weather failed: no reading for Atlantis' },
    { type: 'function_call_output', call_id: 'call-bad', output: 'invalid arguments for weather__get_weather: arguments.city is required; arguments.town is not allowed' },
  ]);
  assert.equal(result.finalText, 'It is -3 °C and snowing lightly in Oslo.');
  console.log('plugin-executor: direct');
  for (const output of result.items.filter(isCallOutput)) console.log(`  ${output.call_id} → ${texts(output).join(' ')}`);
} finally {
  await direct.shutdown();
}

// 2. Code Mode: the same executor, reached from a cell as `tools.weather__get_weather`.
const codeMode = createSession({ toolMode: 'code-mode-only', tools: [weather] });
try {
  const cell = `const [oslo, lima] = await Promise.all([tools.weather__get_weather({ city: 'Oslo' }), tools.weather__get_weather({ city: 'Lima' })]);
text(oslo);
text(typeof oslo.tempC + ' ' + typeof oslo.conditions);
text('warmer in ' + (lima.tempC > oslo.tempC ? lima.city : oslo.city) + ' by ' + Math.abs(lima.tempC - oslo.tempC) + ' °C');
try { await tools.weather__get_weather({ city: 'Atlantis' }); } catch (error) { text('refused: ' + (error?.message ?? String(error))); }`;
  const model = createScriptedModel([
    [{ type: 'custom_tool_call', call_id: 'exec-compare', name: 'exec', input: cell }],
    [{ type: 'message', role: 'assistant', content: 'Lima is warmer.' }],
  ]);
  const result = await codeMode.runTurn({ model, input: 'Which is warmer, Oslo or Lima?' });

  // The model learns the typed signature, rendered from the plugin's JSON Schemas, in exec's description.
  const exec = model.requests[0].tools.find((tool) => (tool as { name?: string }).name === 'exec') as { description: string } | undefined;
  assert.ok(exec, 'exec is visible');
  assert.ok(
    exec.description.endsWith(
      '## weather__\nWeather readings.\n\n### `weather__get_weather`\nCurrent weather for a city.\n\nexec tool declaration:\n```ts\n' +
        'declare const tools: { weather__get_weather(args: { city: string; }): Promise<{ city: string; conditions: string; tempC: number; }>; };\n```',
    ),
    exec.description,
  );
  // In the cell the result is a typed value: numbers compare and subtract, failures reject with the text.
  const [output] = result.items.filter(isCallOutput);
  assert.equal(output.call_id, 'exec-compare');
  const [header, ...lines] = texts(output);
  assert.match(header, /^Script completed\nWall time \d+\.\d seconds\nOutput:\n$/);
  assert.deepEqual(lines, [
    '{"city":"Oslo","tempC":-3,"conditions":"light snow"}',
    'number string',
    'warmer in Lima by 22 °C',
    'refused: tool weather__get_weather failed: no reading for Atlantis',
  ]);
  assert.equal(result.items.filter(isCallOutput).length, 1);
  console.log('plugin-executor: code mode');
  for (const line of lines) console.log(`  cell → ${line}`);
  console.log('plugin-executor: ok');
} finally {
  await codeMode.shutdown();
}
