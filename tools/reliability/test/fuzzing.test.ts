import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isSwitchyardError, type JsonSchema, type JsonValue, type PreToolUseRequest } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { parseExecSource } from '../../../packages/code-mode/src/pragma';
import { isApplyPatchError, parsePatch } from '@switchyard/tool-apply-patch';
import { createHookEngine } from '@switchyard/hooks';
import { parseFunctionArguments, validateArguments } from '../../../packages/registry/src/input-validation';
import { byProfile, report } from '../src/profile';

// Property-based fuzzing: each parser either returns a well-formed value or throws one of its
// documented errors — nothing else escapes (no TypeError, no hang, no rejection of a never-reject API).
const RUNS = byProfile(400, 20_000);
const HOOK_RUNS = byProfile(150, 3_000);
const COMMAND_HOOK_RUNS = byProfile(12, 200);

const scratch = mkdtempSync(join(tmpdir(), 'reliability-fuzz-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const anyText = fc.string({ unit: 'binary', maxLength: 300 });
/** Mixes arbitrary text with the given structural pieces, so generated inputs reach deep branches. */
const shaped = (pieces: readonly string[]) =>
  fc.array(fc.oneof(fc.constantFrom(...pieces), anyText, fc.string({ maxLength: 20 })), { maxLength: 25 }).map((lines) => lines.join('\n'));

function documented(error: unknown, code: string, pattern: RegExp): boolean {
  return isSwitchyardError(error) && error.code === code && pattern.test(error.message);
}

describe('property-based fuzzing', () => {
  it('the exec pragma parser returns the source or a documented INVALID_INPUT error', () => {
    let accepted = 0;
    let refused = 0;
    const pragma = fc
      .tuple(fc.constantFrom('', ' ', '\t'), fc.oneof(fc.json(), fc.constantFrom('{"yield_time_ms": 5}', '{"max_output_tokens": -1}', '{"yield_time_ms": 1e300}', '{"x": 1}', '[]', 'null', '{')), anyText)
      .map(([space, json, rest]) => `${space}// @exec: ${json}\n${rest}`);
    fc.assert(
      fc.property(fc.oneof(anyText, pragma, shaped(['// @exec:', '// @exec: {}', '', ' '])), (input) => {
        try {
          const result = parseExecSource(input);
          accepted++;
          const newline = input.indexOf('\n');
          expect([input, input.slice(newline + 1)]).toContain(result.code);
          for (const value of [result.yieldTimeMs, result.maxOutputTokens]) {
            if (value !== undefined) expect(Number.isSafeInteger(value) && value >= 0).toBe(true);
          }
        } catch (error) {
          refused++;
          expect(documented(error, 'INVALID_INPUT', /^exec (expects raw JavaScript|pragma )/), String(error)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
    report('fuzz: exec pragma parser', `${RUNS} inputs, ${accepted} parsed, ${refused} refused with documented INVALID_INPUT texts, 0 other errors`);
  });

  it('the apply_patch parser returns hunks or an ApplyPatchError', () => {
    let accepted = 0;
    let refused = 0;
    const pieces = ['*** Begin Patch', '*** End Patch', '*** Add File: a.txt', '*** Update File: b.txt', '*** Delete File: c.txt', '*** Move to: d.txt', '@@', '@@ def f():', '+added', '-removed', ' context', '*** End of File', "<<'EOF'", 'EOF', 'apply_patch <<EOF', '+', '-', ' '];
    const wellFramed = shaped(pieces).map((body) => `*** Begin Patch\n${body}\n*** End Patch`);
    // Mostly valid patches (add / delete / update with chunks), then one line possibly replaced.
    const path = fc.stringMatching(/^[a-z][a-z0-9_/]{0,12}\.txt$/);
    const line = fc.string({ maxLength: 30 }).map((text) => text.replace(/\n/g, ''));
    const hunk = fc.oneof(
      fc.tuple(path, fc.array(line, { maxLength: 4 })).map(([file, lines]) => [`*** Add File: ${file}`, ...lines.map((text) => `+${text}`)]),
      path.map((file) => [`*** Delete File: ${file}`]),
      fc
        .tuple(path, fc.option(path), fc.array(fc.tuple(fc.option(line), fc.array(fc.tuple(fc.constantFrom(' ', '-', '+'), line), { minLength: 1, maxLength: 5 })), { minLength: 1, maxLength: 3 }))
        .map(([file, moveTo, chunks]) => [
          `*** Update File: ${file}`,
          ...(moveTo ? [`*** Move to: ${moveTo}`] : []),
          ...chunks.flatMap(([header, lines]) => [header === null ? '@@' : `@@ ${header}`, ...lines.map(([sign, text]) => sign + text)]),
        ]),
    );
    const plausible = fc
      .tuple(fc.array(hunk, { minLength: 1, maxLength: 4 }), fc.option(fc.tuple(fc.nat(), anyText)))
      .map(([hunks, mutation]) => {
        const lines = ['*** Begin Patch', ...hunks.flat(), '*** End Patch'];
        if (mutation) lines[mutation[0] % lines.length] = mutation[1];
        return lines.join('\n');
      });
    fc.assert(
      fc.property(fc.oneof(anyText, shaped(pieces), wellFramed, plausible, plausible), (text) => {
        try {
          const parsed = parsePatch(text);
          accepted++;
          expect(Array.isArray(parsed.hunks)).toBe(true);
          expect(typeof parsed.patch).toBe('string');
        } catch (error) {
          refused++;
          expect(isApplyPatchError(error), String(error)).toBe(true);
          expect(['INVALID_PATCH', 'INVALID_HUNK']).toContain((error as { code: string }).code);
        }
      }),
      { numRuns: RUNS },
    );
    report('fuzz: apply_patch parser', `${RUNS} inputs, ${accepted} parsed, ${refused} refused with INVALID_PATCH / INVALID_HUNK, 0 other errors`);
  });

  it('hook output of any shape fails open or decides; the engine never rejects', async () => {
    const loose = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string(), fc.constant(undefined));
    const words = fc.string({ maxLength: 40 });
    const hookOutput = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      words.map((reason) => ({ decision: 'block', reason })),
      words.map((reason) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })),
      words.map((reason) => ({ continue: false, stopReason: reason })),
      fc.tuple(words, fc.jsonValue({ maxDepth: 2 })).map(([context, updatedInput]) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', additionalContext: context, updatedInput } })),
      fc.record(
        {
          continue: loose,
          stopReason: loose,
          suppressOutput: loose,
          systemMessage: loose,
          decision: fc.oneof(fc.constantFrom('block', 'approve', 'allow', 'deny'), loose),
          reason: loose,
          hookSpecificOutput: fc.oneof(
            loose,
            fc.record(
              {
                hookEventName: fc.oneof(fc.constantFrom('PreToolUse', 'PostToolUse'), loose),
                permissionDecision: fc.oneof(fc.constantFrom('allow', 'deny', 'ask'), loose),
                permissionDecisionReason: loose,
                updatedInput: loose,
                additionalContext: loose,
                updatedMCPToolOutput: loose,
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    );
    const step = createStepContext();
    const request = (toolInput: JsonValue): PreToolUseRequest => ({
      toolName: 'fuzzed_tool',
      toolInput,
      toolUseId: 'call-fuzz',
      caller: { kind: 'direct' },
      step,
      signal: new AbortController().signal,
    });
    const counts = { blocked: 0, passed: 0, feedback: 0, warnings: 0 };
    await fc.assert(
      fc.asyncProperty(hookOutput, fc.jsonValue({ maxDepth: 2 }), async (output, toolInput) => {
        const engine = createHookEngine({
          functionHooks: [
            { event: 'PreToolUse', name: 'fuzz', run: () => output as never },
            { event: 'PostToolUse', name: 'fuzz', run: () => output as never },
          ],
        });
        const pre = await engine.runPreToolUse(request(toolInput as JsonValue));
        expect(typeof pre.blocked).toBe('boolean');
        expect(Array.isArray(pre.additionalContexts) && pre.additionalContexts.every((text) => typeof text === 'string')).toBe(true);
        if (pre.blocked) expect(typeof pre.reason).toBe('string');
        const post = await engine.runPostToolUse({ ...request(toolInput as JsonValue), toolResponse: 'ok' });
        expect(Array.isArray(post.additionalContexts)).toBe(true);
        if (post.feedback !== undefined) expect(typeof post.feedback).toBe('string');
        counts[pre.blocked ? 'blocked' : 'passed']++;
        if (post.feedback !== undefined) counts.feedback++;
        if ((pre.warnings?.length ?? 0) + (post.warnings?.length ?? 0) > 0) counts.warnings++;
        await engine.close();
      }),
      { numRuns: HOOK_RUNS },
    );
    report('fuzz: hook output (function hooks)', `${HOOK_RUNS} outputs: ${counts.blocked} blocked, ${counts.passed} passed, ${counts.feedback} post feedback, ${counts.warnings} with warnings; never rejected`);
  });

  it('arbitrary bytes on a command hook stdout (any exit code) never break the engine', async () => {
    const file = join(scratch, 'stdout.bin');
    let runs = 0;
    let blocked = 0;
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2_000 }), fc.constantFrom(0, 1, 2, 3), async (bytes, exitCode) => {
        writeFileSync(file, bytes);
        const engine = createHookEngine({
          shell: '/bin/sh',
          config: { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: `cat '${file}'; cat '${file}' >&2; exit ${exitCode}`, timeout: 10 }] }] } },
        });
        const outcome = await engine.runPreToolUse({
          toolName: 't',
          toolInput: {},
          toolUseId: 'c',
          caller: { kind: 'direct' },
          step: createStepContext(),
          signal: new AbortController().signal,
        });
        expect(typeof outcome.blocked).toBe('boolean');
        if (outcome.blocked) expect(typeof outcome.reason).toBe('string');
        await engine.close();
        runs++;
        if (outcome.blocked) blocked++;
      }),
      { numRuns: COMMAND_HOOK_RUNS },
    );
    report('fuzz: hook output (command hooks)', `${runs} random stdout/stderr byte strings × exit codes 0–3: ${blocked} blocked, ${runs - blocked} passed, never rejected`);
  });

  it('function-argument parsing and validation accept or refuse with the documented INVALID_INPUT texts', () => {
    const schema: fc.Arbitrary<JsonSchema> = fc.letrec<{ node: JsonSchema }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.record({ type: fc.constantFrom('string', 'number', 'integer', 'boolean', 'null') }, { requiredKeys: ['type'] }),
        fc.record({ type: fc.constant('string'), minLength: fc.nat(5), maxLength: fc.nat(10), pattern: fc.constantFrom('^a', '[0-9]+', '(unclosed') }, { requiredKeys: ['type'] }),
        fc.record({ enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 1, maxLength: 4 }) }),
        fc.record({ const: fc.jsonValue({ maxDepth: 1 }) }),
        fc.record({ type: fc.constant('array'), items: tie('node'), minItems: fc.nat(3) }, { requiredKeys: ['type'] }),
        fc.record(
          {
            type: fc.constant('object'),
            properties: fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 4 }),
            required: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
            additionalProperties: fc.oneof(fc.boolean(), tie('node')),
          },
          { requiredKeys: ['type'] },
        ),
        fc.record({ anyOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
        fc.record({ type: fc.constant('bogus-type'), $ref: fc.constantFrom('#/nowhere', 'http://example.com/x') }, { requiredKeys: ['type'] }),
      ) as fc.Arbitrary<JsonSchema>,
    })).node;
    let valid = 0;
    let invalid = 0;
    let malformed = 0;
    fc.assert(
      fc.property(schema, fc.oneof(fc.json(), anyText), (parameters, raw) => {
        let args: JsonValue;
        try {
          args = parseFunctionArguments(raw);
        } catch (error) {
          malformed++;
          expect(documented(error, 'INVALID_INPUT', /^failed to parse function arguments: /), String(error)).toBe(true);
          return;
        }
        try {
          validateArguments('fuzzed_tool', parameters, args);
          valid++;
        } catch (error) {
          invalid++;
          expect(documented(error, 'INVALID_INPUT', /^invalid arguments for fuzzed_tool: arguments/), String(error)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
    report('fuzz: function arguments', `${RUNS} (schema, arguments) pairs: ${malformed} malformed JSON, ${invalid} refused by the schema, ${valid} accepted; only documented INVALID_INPUT texts`);
  });

  it('an own valueOf key against an enum of objects is refused with INVALID_INPUT, not a TypeError', async () => {
    // ajv's deep equality calls `a.valueOf()`; validateArguments turns the throw into a refusal.
    let thrown: unknown;
    try {
      validateArguments('pick', { enum: [{ fast: true }, 'slow'] }, { valueOf: 1 });
    } catch (error) {
      thrown = error;
    }
    expect(isSwitchyardError(thrown) && thrown.code).toBe('INVALID_INPUT');
    expect((thrown as Error).message).toBe('invalid arguments for pick: arguments could not be checked against the schema: a.valueOf is not a function');
    report('fuzz: function arguments', '{"valueOf": 1} against an enum of objects → INVALID_INPUT (held)');
  });
});
