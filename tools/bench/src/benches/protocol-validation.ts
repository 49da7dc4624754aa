/**
 * The runtime protocol's validation on the hot path: one `call` message (every nested call
 * crosses it once) and one `call-result`, validated by the message table's validators
 * (`parseRuntimeMessage` / `parseHostMessage`, hand-written field kinds), beside the same messages
 * validated by zod 4 and valibot schemas of the same fields (a discriminated union on `t` of the
 * runtime's event messages, unknown keys kept as the table keeps them), and beside the
 * `JSON.parse` of the message's text that precedes any validation. Per validate, medians of rounds
 * sampled in alternation.
 */
import * as v from 'valibot';
import { z } from 'zod';
import { parseHostMessage, parseRuntimeMessage } from '../../../../packages/code-mode-runtime/src/protocol/messages';
import { alternatingMedians, compare, type Bench, type BenchFigure } from '../harness';

const CALL = { t: 'call', call: 17, session: 's1', cellId: 'c3', runtimeToolCallId: 'tool-17', tool: 'read_file', input: { path: 'src/index.ts', offset: 0, limit: 200 } };
const RESULT = { t: 'call-result', call: 17, ok: true, value: { text: 'export const x = 1;\n', lines: 1 } };
const CALL_TEXT = JSON.stringify(CALL);
const LOOP = 20_000;

const nonNegative = z.number().int().nonnegative();
const zodRuntime = z.discriminatedUnion('t', [
  z.looseObject({ t: z.literal('call'), call: nonNegative, session: z.string(), cellId: z.string(), runtimeToolCallId: z.string(), tool: z.string(), input: z.json().optional() }),
  z.looseObject({ t: z.literal('call-abort'), call: nonNegative, session: z.string() }),
  z.looseObject({ t: z.literal('notify'), session: z.string(), cellId: z.string(), text: z.string() }),
  z.looseObject({ t: z.literal('commit'), session: z.string(), cellId: z.string(), writes: z.array(z.tuple([z.string(), z.string()])), more: z.boolean() }),
  z.looseObject({ t: z.literal('cell-closed'), session: z.string(), cellId: z.string() }),
  z.looseObject({ t: z.literal('fatal'), message: z.string() }),
]);
const zodResult = z.discriminatedUnion('ok', [
  z.looseObject({ t: z.literal('call-result'), call: nonNegative, ok: z.literal(true), value: z.json().optional() }),
  z.looseObject({ t: z.literal('call-result'), call: nonNegative, ok: z.literal(false), error: z.string() }),
]);

const vNonNegative = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
const valibotRuntime = v.variant('t', [
  v.looseObject({ t: v.literal('call'), call: vNonNegative, session: v.string(), cellId: v.string(), runtimeToolCallId: v.string(), tool: v.string(), input: v.optional(v.unknown()) }),
  v.looseObject({ t: v.literal('call-abort'), call: vNonNegative, session: v.string() }),
  v.looseObject({ t: v.literal('notify'), session: v.string(), cellId: v.string(), text: v.string() }),
  v.looseObject({ t: v.literal('commit'), session: v.string(), cellId: v.string(), writes: v.array(v.tuple([v.string(), v.string()])), more: v.boolean() }),
  v.looseObject({ t: v.literal('cell-closed'), session: v.string(), cellId: v.string() }),
  v.looseObject({ t: v.literal('fatal'), message: v.string() }),
]);
const valibotResult = v.variant('ok', [
  v.looseObject({ t: v.literal('call-result'), call: vNonNegative, ok: v.literal(true), value: v.optional(v.unknown()) }),
  v.looseObject({ t: v.literal('call-result'), call: vNonNegative, ok: v.literal(false), error: v.string() }),
]);

/** `LOOP` runs of `fn` as one sample; the figures are per run, in µs. */
const looped = (fn: () => unknown) => async () => {
  for (let i = 0; i < LOOP; i++) fn();
};
const perValidate = (ms: number) => (ms * 1_000) / LOOP;

const bench: Bench = {
  name: 'runtime protocol validation',
  async run(): Promise<BenchFigure[]> {
    const [table, zod4, valibot, parse, tableResult, zodR, valibotR] = (
      await alternatingMedians(
        [
          looped(() => parseRuntimeMessage(CALL)),
          looped(() => zodRuntime.parse(CALL)),
          looped(() => v.parse(valibotRuntime, CALL)),
          looped(() => JSON.parse(CALL_TEXT)),
          looped(() => parseHostMessage(RESULT)),
          looped(() => zodResult.parse(RESULT)),
          looped(() => v.parse(valibotResult, RESULT)),
        ],
        15,
        3,
      )
    ).map(perValidate);
    const note = `${LOOP} validates per sample, 15 samples`;
    return [
      compare('validate one call message: message table', table, 'µs', { name: 'JSON.parse of its text', value: parse }, { note }),
      compare('validate one call message: zod 4', zod4, 'µs', { name: 'message table', value: table }, { note }),
      compare('validate one call message: valibot', valibot, 'µs', { name: 'message table', value: table }, { note }),
      compare('validate one call-result: zod 4', zodR, 'µs', { name: 'message table', value: tableResult }, { note }),
      compare('validate one call-result: valibot', valibotR, 'µs', { name: 'message table', value: tableResult }, { note }),
    ];
  },
};
export default bench;
