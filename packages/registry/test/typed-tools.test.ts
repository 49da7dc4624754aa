// The define helpers' executors, exercised through the registry's real dispatch (invokeTool):
// the contract package cannot depend on the registry, so these tests live here.
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as v from 'valibot';
import { toJsonSchema, toStandardJsonSchema } from '@valibot/to-json-schema';
import { z } from 'zod';
import { isSwitchyardError, type ApprovalProvider, type ApprovalRequest, type ToolExecutor, type ToolPayload } from '@switchyard/protocol';
import { defineFreeformTool, defineFunctionTool, type InferJsonSchema, type ToolArguments } from '@switchyard/kit';
import { invokeTool } from '../src/testing/index';
import { invoke } from './support';

const jsonPayload = (args: unknown): ToolPayload => ({ kind: 'function', arguments: JSON.stringify(args) });

async function refusalOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isSwitchyardError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('typed tools', () => {
  it('infers argument types from an inline JSON Schema', () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer' },
        units: { enum: ['c', 'f'] },
        tags: { type: 'array', items: { type: 'string' } },
        maybe: { type: ['string', 'null'] },
      },
      required: ['city', 'units'],
    } as const;
    expectTypeOf<InferJsonSchema<typeof schema>>().toEqualTypeOf<{ city: string; units: 'c' | 'f'; days?: number; tags?: string[]; maybe?: string | null }>();
    defineFunctionTool({
      name: 'forecast',
      description: 'Forecast.',
      parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] },
      handle: ({ args }) => {
        expectTypeOf(args).toEqualTypeOf<{ city: string; days?: number }>();
        return args.city;
      },
    });
    // a schema the compiler cannot see into keeps the loose type
    expectTypeOf<ToolArguments<{ type?: string }>>().toEqualTypeOf<{ [key: string]: import('@switchyard/protocol').JsonValue }>();
  });

  it('takes a zod schema: the model sees its JSON Schema, the handler its parsed output', async () => {
    const tool = defineFunctionTool({
      name: 'check_stock',
      namespace: 'inventory',
      description: 'Units in stock.',
      parameters: z.object({ sku: z.string().min(2), warehouse: z.string().default('main') }),
      handle: ({ args }) => {
        expectTypeOf(args).toEqualTypeOf<{ sku: string; warehouse: string }>();
        return `${args.sku}@${args.warehouse}`;
      },
    });
    expect(tool.spec).toMatchObject({ type: 'function', name: 'check_stock' });
    expect((tool.spec as { parameters: unknown }).parameters).toEqual({
      type: 'object',
      properties: { sku: { type: 'string', minLength: 2 }, warehouse: { type: 'string', default: 'main' } },
      required: ['sku'],
    });
    const output = await invoke(tool, jsonPayload({ sku: 'lamp' }));
    expect(output.toResponseItem('c1', { kind: 'function', arguments: '' })).toEqual({ type: 'function_call_output', call_id: 'c1', output: 'lamp@main' });
    // The model's call meets the registry's check of the JSON Schema first: that is the answer it reads.
    expect(await refusalOf(invoke(tool, jsonPayload({ sku: 'x' })))).toEqual({
      code: 'INVALID_INPUT',
      message: 'invalid arguments for inventory__check_stock: arguments.sku must NOT have fewer than 2 characters',
    });
    // The Standard Schema's own check, for a host that turns schema validation off for the tool.
    expect(await refusalOf(invoke({ ...tool, skipInputValidation: true }, jsonPayload({ sku: 'x' })))).toEqual({
      code: 'INVALID_INPUT',
      message: 'invalid arguments for inventory__check_stock: arguments.sku: Too small: expected string to have >=2 characters',
    });
  });

  it('takes a valibot schema with its JSON Schema, or through toStandardJsonSchema', async () => {
    const schema = v.object({ city: v.pipe(v.string(), v.toUpperCase()) });
    const explicit = defineFunctionTool({
      name: 'weather',
      description: 'Weather.',
      parameters: schema,
      jsonSchema: toJsonSchema(v.object({ city: v.string() })) as never,
      handle: ({ args }) => {
        expectTypeOf(args).toEqualTypeOf<{ city: string }>();
        return args.city;
      },
    });
    expect((await invoke(explicit, jsonPayload({ city: 'oslo' }))).toResponseItem('c', { kind: 'function', arguments: '' })).toMatchObject({ output: 'OSLO' });
    expect(await refusalOf(invoke(explicit, jsonPayload({ city: 7 })))).toEqual({ code: 'INVALID_INPUT', message: 'invalid arguments for weather: arguments.city must be string' });
    expect(await refusalOf(invoke({ ...explicit, skipInputValidation: true }, jsonPayload({ city: 7 })))).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/^invalid arguments for weather: arguments\.city: /),
    });

    const standard = defineFunctionTool({ name: 'weather2', description: 'Weather.', parameters: toStandardJsonSchema(v.object({ city: v.string() })), handle: ({ args }) => args.city });
    expect((standard.spec as { parameters: unknown }).parameters).toMatchObject({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });

    let thrown: unknown;
    try {
      defineFunctionTool({ name: 'weather3', description: 'Weather.', parameters: schema, handle: () => 'x' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: 'CONFIG',
      message: 'defineFunctionTool(weather3): the valibot schema has no JSON Schema export (~standard.jsonSchema); pass `jsonSchema` (the schema the model sees)',
    });
  });

  it('needsApproval asks the step’s approval provider with the arguments before the handler runs', async () => {
    const asked: ApprovalRequest[] = [];
    let ran = 0;
    const answer = (decision: 'approved' | 'denied' | 'throw'): ApprovalProvider => ({
      async requestApproval(request) {
        asked.push(request);
        if (decision === 'throw') throw new Error('ui crashed');
        return decision;
      },
    });
    const refund = defineFunctionTool({
      name: 'refund',
      namespace: 'billing',
      description: 'Refunds an order.',
      parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      needsApproval: (args) => args.amount > 100,
      handle: ({ args }) => {
        ran++;
        return `refunded ${args.amount}`;
      },
    });
    await invoke(refund, jsonPayload({ amount: 5 }));
    expect(asked).toEqual([]);
    await invoke(refund, jsonPayload({ amount: 500 }), answer('approved'));
    expect(asked).toMatchObject([{ kind: 'tool', toolName: 'billing__refund', callId: 'call-1', input: { amount: 500 } }]);
    expect(ran).toBe(2);
    const denied = { code: 'APPROVAL_DENIED', message: 'billing__refund rejected by user' };
    expect(await refusalOf(invoke(refund, jsonPayload({ amount: 500 }), answer('denied')))).toEqual(denied);
    expect(await refusalOf(invoke(refund, jsonPayload({ amount: 500 }), answer('throw')))).toEqual(denied);
    expect(await refusalOf(invoke(refund, jsonPayload({ amount: 500 })))).toEqual({
      code: 'APPROVAL_DENIED',
      message: 'billing__refund needs approval, and no approval provider is configured',
    });
    expect(ran).toBe(2);

    const freeform = defineFreeformTool({ name: 'shell_note', description: 'Notes.', needsApproval: true, handle: ({ input }) => input });
    expect(await refusalOf(invoke(freeform, { kind: 'custom', input: 'rm -rf' }, answer('denied')))).toEqual({ code: 'APPROVAL_DENIED', message: 'shell_note rejected by user' });
    expect(asked.at(-1)).toMatchObject({ kind: 'tool', toolName: 'shell_note', input: 'rm -rf' });
  });
});
