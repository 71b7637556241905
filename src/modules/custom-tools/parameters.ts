// The JSON Schemas customers give as a tool's `parameters`: checked to
// compile when a tool is declared, and used to validate the model's arguments
// before any request is made. One Ajv instance serves every account, so a
// schema may not register anything in it (`$id` is refused, compiled schemas
// are not added by id) and compiled validators are kept in a bounded cache
// (Ajv itself would keep every schema object it ever compiled).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A schema's JSON past this is refused (it goes to the model on every turn). */
export const MAX_PARAMETERS_BYTES = 16 * 1024;
/** Distinct schemas whose validators are kept compiled. */
const CACHED_VALIDATORS = 256;

export class ParameterSchemas {
  private readonly ajv: Ajv;
  /** Validators by the schema's JSON, least recently used first. */
  private readonly validators = new Map<string, { schema: object; validate: ValidateFunction }>();

  constructor() {
    // strict: false: schemas written for model providers carry keywords Ajv does not know (`example`, …).
    this.ajv = new Ajv({ strict: false, allErrors: false, addUsedSchema: false, logger: false, allowUnionTypes: true });
    addFormats(this.ajv);
  }

  /** Why a `parameters` schema cannot be used, or null when it compiles as a JSON Schema of type object. */
  problem(schema: unknown): string | null {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema object';
    if ((schema as { type?: unknown }).type !== 'object') return 'must be a JSON Schema of type "object"';
    const json = JSON.stringify(schema);
    if (Buffer.byteLength(json) > MAX_PARAMETERS_BYTES) return `is larger than ${MAX_PARAMETERS_BYTES / 1024} KB`;
    if (/"\$id"\s*:/.test(json)) return 'must not use $id';
    if ((schema as { properties?: Record<string, unknown> }).properties?._call !== undefined)
      return 'must not declare `_call` (it carries the call beside the arguments)';
    try {
      this.validator(schema as object, json);
    } catch (err) {
      return `does not compile: ${(err as Error).message}`;
    }
    return null;
  }

  /** Why `args` does not match `schema` (`/path message`), or null when they do. The schema passed problem() when declared. */
  argumentProblem(schema: object, args: unknown): string | null {
    const validate = this.validator(schema, JSON.stringify(schema));
    if (validate(args)) return null;
    const first = validate.errors?.[0];
    return first ? `${first.instancePath || '/'} ${first.message ?? 'is invalid'}` : 'rejected by the schema';
  }

  private validator(_schema: object, json: string): ValidateFunction {
    const cached = this.validators.get(json);
    if (cached) {
      this.validators.delete(json);
      this.validators.set(json, cached);
      return cached.validate;
    }
    // A copy: the caller's object may change later, and Ajv's own cache is keyed by the object.
    const copy = JSON.parse(json) as object;
    const validate = this.ajv.compile(copy);
    this.validators.set(json, { schema: copy, validate });
    if (this.validators.size > CACHED_VALIDATORS) {
      const [oldestJson, oldest] = this.validators.entries().next().value!;
      this.validators.delete(oldestJson);
      this.ajv.removeSchema(oldest.schema);
    }
    return validate;
  }
}
