// Function-call arguments read the way the reference reads them: serde_json deserializing the text
// into a Rust struct. A failure is answered in serde's words and at serde's position
// (`missing field \`cmd\` at line 1 column 2`, `invalid type: integer \`5\`, expected a string at
// line 1 column 8`, `EOF while parsing a value at line 1 column 8`), so a model trained on the
// reference reads the messages it knows. Unknown fields are ignored, as serde ignores them.
//
// Hand-written: no npm library reproduces serde_json's error texts and positions. The reader
// follows serde_json's order of work — what it consumes before it fails decides the column.
import { RespondToModelError, type JsonObject, type JsonSchema, type JsonValue } from '@switchyard/protocol';

/** The Rust type of one field, as its error texts name it. */
export type SerdeType =
  | 'string'
  | 'bool'
  | 'u8' | 'u16' | 'u32' | 'u64' | 'usize' | 'i8' | 'i16' | 'i32' | 'i64' | 'isize' | 'f32' | 'f64'
  | { readonly vec: SerdeType }
  | { readonly variants: readonly string[] }
  | 'any';

/** One field of the struct: its type, and whether a missing field is an error (no default, not an `Option`). */
export interface SerdeField {
  readonly type: SerdeType;
  readonly required?: boolean;
}

/** The struct the arguments deserialize into, fields in declaration order. */
export interface SerdeStruct {
  readonly name: string;
  readonly fields: Readonly<Record<string, SerdeField>>;
}

/** Thrown by {@link deserializeArguments}: serde's text with its position. */
export class SerdeError extends Error {
  /** False for an error serde raises without a position; the struct's reader adds it at its end. */
  readonly positioned: boolean;

  constructor(message: string, positioned = true) {
    super(message);
    this.positioned = positioned;
  }
}

/**
 * The struct a JSON Schema describes: `string` → `String`, `boolean` → `bool`, `array` of strings →
 * `Vec<String>`, a string `enum` → a unit enum, `number`/`integer` → `f64` unless `integerTypes`
 * names the property's Rust type (`{ yield_time_ms: 'u64' }`); required properties are required.
 */
export function serdeStructFromSchema(name: string, schema: JsonSchema, integerTypes: Readonly<Record<string, SerdeType>> = {}): SerdeStruct {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields: Record<string, SerdeField> = {};
  for (const [key, property] of Object.entries(properties)) {
    fields[key] = { type: integerTypes[key] ?? typeOfSchema(property), required: required.has(key) };
  }
  return { name, fields };
}

function typeOfSchema(schema: JsonSchema): SerdeType {
  if (Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string')) return { variants: schema.enum as string[] };
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
    case 'integer':
      return 'f64';
    case 'array':
      return { vec: schema.items && typeof schema.items === 'object' ? typeOfSchema(schema.items as JsonSchema) : 'any' };
    default:
      return 'any';
  }
}

/**
 * Deserializes `text` into `struct` as serde_json would: returns the fields it read (unknown ones
 * dropped), or throws a {@link SerdeError} with serde's message and position.
 */
export function deserializeArguments(text: string, struct: SerdeStruct): JsonObject {
  const reader = new Reader(text);
  const value = reader.struct(struct);
  reader.end();
  return value;
}

/**
 * A tool's `parseArguments` in the reference's words: deserializes the arguments text into the
 * struct `schema` describes (`types` names the Rust type of its numbers, e.g. `{ session_id: 'i32' }`;
 * without it a number is an `f64`), unknown properties dropped. A failure throws a
 * `RespondToModelError` (`INVALID_INPUT`): `failed to parse function arguments: <serde's text>`.
 */
export function serdeArgumentsParser(options: { name: string; schema: JsonSchema; types?: Readonly<Record<string, SerdeType>> }): (text: string) => JsonObject {
  const struct = serdeStructFromSchema(options.name, options.schema, options.types);
  return (text) => {
    try {
      return deserializeArguments(text, struct);
    } catch (error) {
      if (!(error instanceof SerdeError)) throw error;
      throw new RespondToModelError(`failed to parse function arguments: ${error.message}`, { code: 'INVALID_INPUT', cause: error });
    }
  };
}

/** serde_json's syntax error for `text`, or `undefined` when it is one well-formed JSON value. */
export function serdeJsonSyntaxError(text: string): string | undefined {
  try {
    const reader = new Reader(text);
    reader.any();
    reader.end();
    return undefined;
  } catch (error) {
    if (error instanceof SerdeError) return error.message;
    throw error;
  }
}

const INTEGER_RANGES: Record<string, readonly [number | bigint, number | bigint]> = {
  u8: [0, 255], u16: [0, 65_535], u32: [0, 4_294_967_295], u64: [0n, 18_446_744_073_709_551_615n], usize: [0n, 18_446_744_073_709_551_615n],
  i8: [-128, 127], i16: [-32_768, 32_767], i32: [-2_147_483_648, 2_147_483_647], i64: [-9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n],
  isize: [-9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n],
};

/** A number as serde_json parsed it: an unsigned or signed integer, or a float. */
type ParsedNumber = { kind: 'u64' | 'i64'; value: bigint } | { kind: 'f64'; value: number };

/** What an `invalid type` error names: `integer \`5\``, `string "x"`, `map`, … */
type Unexpected = string;

class Reader {
  private index = 0;
  private readonly bytes: Buffer;

  constructor(text: string) {
    this.bytes = Buffer.from(text, 'utf8');
  }

  // --- positions: serde's `position()` (after what was consumed) and `peek_position()` (the next byte)

  private at(index: number): string {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < index; i++) {
      if (this.bytes[i] === 0x0a) {
        line += 1;
        lineStart = i + 1;
      }
    }
    return ` at line ${line} column ${index - lineStart}`;
  }

  /** An error at the current position (serde's `error`, and `fix_position` of a positionless error). */
  private fail(message: string): never {
    throw new SerdeError(message + this.at(this.index));
  }

  /** An error at the next byte (serde's `peek_error`). */
  private failPeek(message: string): never {
    throw new SerdeError(message + this.at(Math.min(this.bytes.length, this.index + 1)));
  }

  private peek(): number | undefined {
    return this.bytes[this.index];
  }

  private skipWhitespace(): number | undefined {
    for (;;) {
      const byte = this.peek();
      if (byte === 0x20 || byte === 0x0a || byte === 0x09 || byte === 0x0d) this.index += 1;
      else return byte;
    }
  }

  end(): void {
    if (this.skipWhitespace() !== undefined) this.failPeek('trailing characters');
  }

  // --- the struct (serde_derive's visit_map over serde_json's MapAccess)

  struct(struct: SerdeStruct): JsonObject {
    const peek = this.skipWhitespace();
    if (peek === undefined) this.failPeek('EOF while parsing a value');
    if (peek !== 0x7b) this.invalidType(`struct ${struct.name}`);
    this.index += 1;
    const out: JsonObject = {};
    let failure: SerdeError | undefined;
    try {
      this.mapEntries((key) => {
        const field = struct.fields[key];
        // serde_derive refuses a repeated field before reading its value
        if (field && key in out) throw new SerdeError(`duplicate field \`${key}\``, false);
        this.colon();
        if (field) out[key] = this.value(field.type);
        else this.any();
      });
      const missing = Object.entries(struct.fields).find(([key, field]) => field.required && !(key in out));
      if (missing) failure = new SerdeError(`missing field \`${missing[0]}\``, false);
    } catch (error) {
      if (!(error instanceof SerdeError)) throw error;
      failure = error;
    }
    // serde_json ends the map whether or not the visitor failed; the visitor's error wins.
    const endError = this.tryEndMap();
    if (failure) throw failure.positioned ? failure : new SerdeError(failure.message + this.at(this.index));
    if (endError) throw endError;
    return out;
  }

  private tryEndMap(): SerdeError | undefined {
    try {
      const peek = this.skipWhitespace();
      if (peek === 0x7d) this.index += 1;
      else if (peek === 0x2c) this.failPeek('trailing comma');
      else if (peek === undefined) this.failPeek('EOF while parsing an object');
      else this.failPeek('trailing characters');
      return undefined;
    } catch (error) {
      if (error instanceof SerdeError) return error;
      throw error;
    }
  }

  /** Reads `"key": value` pairs up to (not past) the closing brace; `entry` reads each value. */
  private mapEntries(entry: (key: string) => void): void {
    let first = true;
    for (;;) {
      let peek = this.skipWhitespace();
      if (peek === 0x7d) return;
      if (peek === 0x2c && !first) {
        this.index += 1;
        peek = this.skipWhitespace();
      } else if (peek === undefined) {
        this.failPeek('EOF while parsing an object');
      } else if (!first) {
        this.failPeek('expected `,` or `}`');
      }
      first = false;
      if (peek === 0x22) {
        this.index += 1;
        entry(this.stringBody());
      } else if (peek === 0x7d) {
        this.failPeek('trailing comma');
      } else if (peek === undefined) {
        this.failPeek('EOF while parsing a value');
      } else {
        this.failPeek('key must be a string');
      }
    }
  }

  /** The `:` between a key and its value. */
  colon(): void {
    const colon = this.skipWhitespace();
    if (colon === 0x3a) this.index += 1;
    else if (colon === undefined) this.failPeek('EOF while parsing an object');
    else this.failPeek('expected `:`');
  }

  // --- typed values

  private value(type: SerdeType): JsonValue {
    if (type === 'any') return this.any();
    if (type === 'string') {
      if (this.skipWhitespace() !== 0x22) this.invalidType('a string');
      this.index += 1;
      return this.stringBody();
    }
    if (type === 'bool') {
      const peek = this.skipWhitespace();
      if (peek === 0x74) return this.ident('true', true);
      if (peek === 0x66) return this.ident('false', false);
      this.invalidType('a boolean');
    }
    if (typeof type === 'string') return this.number(type);
    if ('vec' in type) return this.sequence(type.vec);
    return this.variant(type.variants);
  }

  private number(type: string): number {
    const peek = this.skipWhitespace();
    if (peek !== 0x2d && !(peek !== undefined && peek >= 0x30 && peek <= 0x39)) this.invalidType(type);
    const parsed = this.parseNumber();
    if (type === 'f32' || type === 'f64') return parsed.kind === 'f64' ? parsed.value : Number(parsed.value);
    if (parsed.kind === 'f64') this.fail(`invalid type: floating point \`${formatFloat(parsed.value)}\`, expected ${type}`);
    const [min, max] = INTEGER_RANGES[type]!;
    if (parsed.value < BigInt(min) || parsed.value > BigInt(max)) {
      this.fail(`invalid value: integer \`${parsed.value}\`, expected ${type}`);
    }
    return Number(parsed.value);
  }

  private sequence(item: SerdeType): JsonValue[] {
    if (this.skipWhitespace() !== 0x5b) this.invalidType('a sequence');
    this.index += 1;
    const out: JsonValue[] = [];
    let failure: SerdeError | undefined;
    try {
      let first = true;
      for (;;) {
        let peek = this.skipWhitespace();
        if (peek === 0x5d) break;
        if (peek === 0x2c && !first) {
          this.index += 1;
          peek = this.skipWhitespace();
          if (peek === 0x5d) this.failPeek('trailing comma');
        } else if (peek === undefined) {
          this.failPeek('EOF while parsing a list');
        } else if (!first) {
          this.failPeek('expected `,` or `]`');
        }
        first = false;
        out.push(this.value(item));
      }
    } catch (error) {
      if (!(error instanceof SerdeError)) throw error;
      failure = error;
    }
    const endError = this.tryEndSeq();
    if (failure) throw failure;
    if (endError) throw endError;
    return out;
  }

  private tryEndSeq(): SerdeError | undefined {
    try {
      const peek = this.skipWhitespace();
      if (peek === 0x5d) this.index += 1;
      else if (peek === undefined) this.failPeek('EOF while parsing a list');
      else this.failPeek('trailing characters');
      return undefined;
    } catch (error) {
      if (error instanceof SerdeError) return error;
      throw error;
    }
  }

  private variant(variants: readonly string[]): string {
    if (this.skipWhitespace() !== 0x22) this.invalidType('value');
    this.index += 1;
    const name = this.stringBody();
    // serde_json positions it right after the variant's string
    if (!variants.includes(name)) this.fail(`unknown variant \`${name}\`, expected ${oneOf(variants)}`);
    return name;
  }

  // --- untyped values (serde's IgnoredAny and Value)

  any(depth = 0): JsonValue {
    const peek = this.skipWhitespace();
    if (peek === undefined) this.failPeek('EOF while parsing a value');
    if (depth >= 128) this.fail('recursion limit exceeded');
    switch (peek) {
      case 0x6e:
        return this.ident('null', null);
      case 0x74:
        return this.ident('true', true);
      case 0x66:
        return this.ident('false', false);
      case 0x22:
        this.index += 1;
        return this.stringBody();
      case 0x5b: {
        this.index += 1;
        const out: JsonValue[] = [];
        for (let first = true; ; first = false) {
          let next = this.skipWhitespace();
          if (next === 0x5d) break;
          if (next === undefined) this.failPeek('EOF while parsing a list');
          if (!first) {
            if (next !== 0x2c) this.failPeek('expected `,` or `]`');
            this.index += 1;
            next = this.skipWhitespace();
            if (next === 0x5d) this.failPeek('trailing comma');
          }
          out.push(this.any(depth + 1));
        }
        this.index += 1;
        return out;
      }
      case 0x7b: {
        this.index += 1;
        const out: JsonObject = {};
        this.mapEntries((key) => {
          this.colon();
          out[key] = this.any(depth + 1);
        });
        this.index += 1;
        return out;
      }
      default:
        if (peek === 0x2d || (peek >= 0x30 && peek <= 0x39)) {
          const parsed = this.parseNumber();
          return parsed.kind === 'f64' ? parsed.value : Number(parsed.value);
        }
        return this.failPeek('expected value');
    }
  }

  private ident<T extends JsonValue>(word: string, value: T): T {
    this.index += 1;
    for (const char of word.slice(1)) {
      const next = this.bytes[this.index];
      if (next === undefined) this.fail('EOF while parsing a value');
      this.index += 1;
      if (next !== char.charCodeAt(0)) this.fail('expected ident');
    }
    return value;
  }

  /** serde's `peek_invalid_type`: reads the offending value (scalars only) and names it. */
  private invalidType(expected: string): never {
    const peek = this.peek();
    let unexpected: Unexpected;
    switch (peek) {
      case undefined:
        return this.failPeek('EOF while parsing a value');
      case 0x6e:
        this.ident('null', null);
        unexpected = 'null';
        break;
      case 0x74:
        this.ident('true', true);
        unexpected = 'boolean `true`';
        break;
      case 0x66:
        this.ident('false', false);
        unexpected = 'boolean `false`';
        break;
      case 0x22:
        this.index += 1;
        unexpected = `string ${JSON.stringify(this.stringBody())}`;
        break;
      case 0x5b:
        unexpected = 'sequence';
        break;
      case 0x7b:
        unexpected = 'map';
        break;
      default: {
        if (peek !== 0x2d && !(peek >= 0x30 && peek <= 0x39)) return this.failPeek('expected value');
        const parsed = this.parseNumber();
        unexpected = parsed.kind === 'f64' ? `floating point \`${formatFloat(parsed.value)}\`` : `integer \`${parsed.value}\``;
      }
    }
    return this.fail(`invalid type: ${unexpected}, expected ${expected}`);
  }

  // --- lexing

  /** After the opening quote: reads to the closing one, unescaping. */
  private stringBody(): string {
    const parts: string[] = [];
    let start = this.index;
    for (;;) {
      const byte = this.bytes[this.index];
      if (byte === undefined) this.fail('EOF while parsing a string');
      if (byte === 0x22) {
        parts.push(this.bytes.toString('utf8', start, this.index));
        this.index += 1;
        return parts.join('');
      }
      if (byte < 0x20) {
        this.index += 1;
        this.fail('control character (\\u0000-\\u001F) found while parsing a string');
      }
      if (byte !== 0x5c) {
        this.index += 1;
        continue;
      }
      parts.push(this.bytes.toString('utf8', start, this.index));
      this.index += 1;
      parts.push(this.escape());
      start = this.index;
    }
  }

  private escape(): string {
    const byte = this.bytes[this.index];
    if (byte === undefined) this.fail('EOF while parsing a string');
    this.index += 1;
    const simple: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };
    if (simple[byte] !== undefined) return simple[byte]!;
    if (byte !== 0x75) this.fail('invalid escape');
    const code = this.hex4();
    if (code >= 0xd800 && code <= 0xdbff && this.bytes[this.index] === 0x5c && this.bytes[this.index + 1] === 0x75) {
      this.index += 2;
      const low = this.hex4();
      if (low >= 0xdc00 && low <= 0xdfff) return String.fromCharCode(code, low);
      return String.fromCharCode(code) + String.fromCharCode(low);
    }
    return String.fromCharCode(code);
  }

  private hex4(): number {
    let value = 0;
    for (let i = 0; i < 4; i++) {
      const byte = this.bytes[this.index];
      if (byte === undefined) this.fail('EOF while parsing a string');
      this.index += 1;
      const digit = parseInt(String.fromCharCode(byte), 16);
      if (Number.isNaN(digit)) this.fail('invalid escape');
      value = value * 16 + digit;
    }
    return value;
  }

  private parseNumber(): ParsedNumber {
    const start = this.index;
    const negative = this.bytes[this.index] === 0x2d;
    if (negative) this.index += 1;
    const digit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39;
    const first = this.bytes[this.index];
    if (first === undefined) this.fail('EOF while parsing a value');
    this.index += 1;
    if (!digit(first)) this.fail('invalid number');
    if (first === 0x30 && digit(this.bytes[this.index])) this.failPeek('invalid number');
    while (digit(this.bytes[this.index])) this.index += 1;
    let float = false;
    if (this.bytes[this.index] === 0x2e) {
      float = true;
      this.index += 1;
      if (!digit(this.bytes[this.index])) {
        if (this.bytes[this.index] === undefined) this.fail('EOF while parsing a value');
        this.index += 1;
        this.fail('invalid number');
      }
      while (digit(this.bytes[this.index])) this.index += 1;
    }
    const e = this.bytes[this.index];
    if (e === 0x65 || e === 0x45) {
      float = true;
      this.index += 1;
      if (this.bytes[this.index] === 0x2b || this.bytes[this.index] === 0x2d) this.index += 1;
      if (!digit(this.bytes[this.index])) {
        if (this.bytes[this.index] === undefined) this.fail('EOF while parsing a value');
        this.index += 1;
        this.fail('invalid number');
      }
      while (digit(this.bytes[this.index])) this.index += 1;
    }
    const text = this.bytes.toString('latin1', start, this.index);
    if (!float) {
      const value = BigInt(text);
      if (negative ? value >= -(2n ** 63n) : value < 2n ** 64n) return { kind: negative ? 'i64' : 'u64', value };
    }
    const value = Number(text);
    if (!Number.isFinite(value)) this.fail('number out of range');
    return { kind: 'f64', value };
  }
}

/** serde's list of expected variants: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``. */
function oneOf(variants: readonly string[]): string {
  const quoted = variants.map((variant) => `\`${variant}\``);
  if (quoted.length === 0) return 'there are no variants';
  if (quoted.length === 1) return quoted[0]!;
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(', ')}`;
}

/** Rust's `{}` of an f64 with serde's forced decimal point (`1.0`, `1.5`). */
function formatFloat(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  return String(value);
}
