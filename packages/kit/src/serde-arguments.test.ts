import { describe, expect, it } from 'vitest';
import { deserializeArguments, serdeJsonSyntaxError, serdeStructFromSchema, type SerdeStruct } from './serde-arguments';

// The exec_command and write_stdin argument structs; every expected text below is what the Codex
// 0.144.6 binary answered for the same arguments (tools/codex-differential records them).
const EXEC: SerdeStruct = serdeStructFromSchema(
  'ExecCommandArgs',
  {
    type: 'object',
    properties: {
      cmd: { type: 'string' },
      tty: { type: 'boolean' },
      yield_time_ms: { type: 'number' },
      prefix_rule: { type: 'array', items: { type: 'string' } },
      sandbox_permissions: { type: 'string', enum: ['use_default', 'require_escalated'] },
    },
    required: ['cmd'],
  },
  { yield_time_ms: 'u64' },
);
const WRITE: SerdeStruct = serdeStructFromSchema('WriteStdinArgs', { type: 'object', properties: { session_id: { type: 'number' }, chars: { type: 'string' } }, required: ['session_id'] }, { session_id: 'i32' });

const deserializeError = (text: string, struct = EXEC) => {
  try {
    deserializeArguments(text, struct);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

describe('deserializeArguments: the binary\'s texts', () => {
  it.each([
    ['{}', 'missing field `cmd` at line 1 column 2'],
    ['{"cmd":5}', 'invalid type: integer `5`, expected a string at line 1 column 8'],
    ['{"cmd": ', 'EOF while parsing a value at line 1 column 8'],
    ['echo hi', 'expected value at line 1 column 1'],
    ['{"cmd":"echo hi"} x', 'trailing characters at line 1 column 19'],
    ['{"cmd":"echo hi","yield_time_ms":"5"}', 'invalid type: string "5", expected u64 at line 1 column 36'],
    ['{"cmd":"echo hi",\n"tty":"yes"}', 'invalid type: string "yes", expected a boolean at line 2 column 11'],
  ])('%j → %s', (text, expected) => {
    expect(deserializeError(text)).toBe(expected);
  });

  it('write_stdin: a missing session_id and a string one', () => {
    expect(deserializeError('{"chars":"x"}', WRITE)).toBe('missing field `session_id` at line 1 column 13');
    expect(deserializeError('{"session_id":"7"}', WRITE)).toBe('invalid type: string "7", expected i32 at line 1 column 17');
  });
});

describe('deserializeArguments: serde_json\'s rules', () => {
  it('ignores unknown fields and returns the known ones', () => {
    expect(deserializeArguments('{"cmd":"ls","timeout_ms":5,"login":{"x":[1,2]}}', EXEC)).toEqual({ cmd: 'ls' });
  });

  it('names values, ranges, variants, duplicates and syntax as serde does', () => {
    expect(deserializeError('{"cmd":"ls","yield_time_ms":-1}')).toBe('invalid value: integer `-1`, expected u64 at line 1 column 30');
    expect(deserializeError('{"cmd":"ls","yield_time_ms":1.5}')).toBe('invalid type: floating point `1.5`, expected u64 at line 1 column 31');
    expect(deserializeError('{"session_id":3000000000}', WRITE)).toBe('invalid value: integer `3000000000`, expected i32 at line 1 column 24');
    expect(deserializeError('{"cmd":"ls","sandbox_permissions":"x"}')).toBe('unknown variant `x`, expected `use_default` or `require_escalated` at line 1 column 37');
    expect(deserializeError('{"cmd":"a","cmd":"b"}')).toBe('duplicate field `cmd` at line 1 column 16');
    expect(deserializeError('{"cmd":["ls"]}')).toBe('invalid type: sequence, expected a string at line 1 column 7');
    expect(deserializeError('{"cmd":"ls","prefix_rule":["a",1]}')).toBe('invalid type: integer `1`, expected a string at line 1 column 32');
    expect(deserializeError('{"cmd":"ls",}')).toBe('trailing comma at line 1 column 13');
    expect(deserializeError('{"cmd" "ls"}')).toBe('expected `:` at line 1 column 8');
    expect(deserializeError('{"cmd":"ls" "x":1}')).toBe('expected `,` or `}` at line 1 column 13');
    expect(deserializeError('{cmd:1}')).toBe('key must be a string at line 1 column 2');
    expect(deserializeError('{"cmd":"a\\qb"}')).toBe('invalid escape at line 1 column 11');
    expect(deserializeError('{"cmd":"ab')).toBe('EOF while parsing a string at line 1 column 10');
    expect(deserializeError('"ls"')).toBe('invalid type: string "ls", expected struct ExecCommandArgs at line 1 column 4');
    expect(deserializeError('')).toBe('EOF while parsing a value at line 1 column 0');
  });

  it('serdeJsonSyntaxError: only syntax', () => {
    expect(serdeJsonSyntaxError('{"a":[1,2,{"b":null}]}')).toBeUndefined();
    expect(serdeJsonSyntaxError('{"a":[1,2,]}')).toBe('trailing comma at line 1 column 11');
    expect(serdeJsonSyntaxError('{"a":tru}')).toBe('expected ident at line 1 column 9');
    expect(serdeJsonSyntaxError('[1] 2')).toBe('trailing characters at line 1 column 5');
  });
});
