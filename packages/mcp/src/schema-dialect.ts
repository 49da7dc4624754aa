import Ajv, { type Options } from 'ajv';
import Ajv2019 from 'ajv/dist/2019.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import type { JsonSchema } from '@switchyard/protocol';
import type { StructuredContentCheck } from './call-result';

/** The dialect MCP (2025-11-25) gives a tool schema without `$schema`. */
export const DEFAULT_MCP_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * The compiled schema checks of one tools listing, one ajv per dialect (the SDK's validator class
 * over each, with the SDK's options: formats checked, all errors). Ajv caches every compiled
 * schema, so a listing gets fresh instances.
 */
export class ToolSchemaValidators {
  private readonly validators = new Map<string, AjvJsonSchemaValidator>();

  /**
   * `schema` as it goes to the registry and the model, with its compiled check. `$schema` is kept;
   * a schema without one is a 2020-12 schema (and carries that `$schema` from here on, so the
   * registry validates calls, nested calls from cells included, as 2020-12), unless it does not
   * compile as 2020-12 but does as draft-07 (an older server's tuple `items: [...]`): then it stays
   * without `$schema`, validated as draft-07. Throws when it compiles in no dialect.
   */
  compile(source: Record<string, unknown>): { schema: JsonSchema; check: StructuredContentCheck } {
    const schema = JSON.parse(JSON.stringify(source)) as JsonSchema;
    if (typeof schema.$schema === 'string') return { schema, check: this.checkFor(schema) };
    const declared = { $schema: DEFAULT_MCP_DIALECT, ...schema } as JsonSchema;
    try {
      return { schema: declared, check: this.checkFor(declared) };
    } catch (error) {
      try {
        return { schema, check: this.checkFor(schema) };
      } catch {
        throw error;
      }
    }
  }

  private checkFor(schema: JsonSchema): StructuredContentCheck {
    const uri = typeof schema.$schema === 'string' ? schema.$schema : '';
    const dialect = uri.includes('2020-12') ? '2020-12' : uri.includes('2019-09') ? '2019-09' : 'draft-07';
    let validator = this.validators.get(dialect);
    if (!validator) {
      const options: Options = { strict: false, validateFormats: true, validateSchema: false, allErrors: true };
      const ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
      (addFormats as unknown as (instance: Ajv) => void)(ajv);
      validator = new AjvJsonSchemaValidator(ajv);
      this.validators.set(dialect, validator);
    }
    // draft-04/06 URIs are unknown to ajv: those compile as draft-07 without their `$schema`.
    const body = dialect === 'draft-07' ? withoutDialect(schema) : schema;
    return validator.getValidator(body as never) as StructuredContentCheck;
  }
}

function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest as JsonSchema;
}
