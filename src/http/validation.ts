// Two validators: query strings, params and headers are text on the wire and
// are coerced to the schema's types; JSON bodies are not, so `"password": 5`
// is a 400 rather than silently becoming "5".
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const base: Options = {
  allErrors: false,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  allowUnionTypes: true,
};

function build(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ ...base, coerceTypes });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'example' });
  return ajv;
}

export function createValidatorCompiler(sharedSchemas: () => Record<string, unknown>): FastifySchemaCompiler<any> {
  const bodyAjv = build(false);
  const textAjv = build('array');
  let loaded = false;
  return ({ schema, httpPart }) => {
    if (!loaded) {
      // Not checked against the JSON Schema meta-schema here (the last `false`):
      // that check compiled the meta-schema in each validator at start-up, about
      // 100 ms. Route schemas are still checked when first compiled, and
      // test/http/validation.test.ts checks every shared schema.
      for (const s of Object.values(sharedSchemas())) {
        bodyAjv.addSchema(s as object, undefined, undefined, false);
        textAjv.addSchema(s as object, undefined, undefined, false);
      }
      loaded = true;
    }
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    // Compiled on the route's first request, not at start-up: most of ~150 routes'
    // validators are never needed by a given server, and compiling them all cost
    // start-up time and memory. Every route's schemas are exercised by the tests.
    let compiled: ValidateFunction | null = null;
    const validate = (data: unknown) => {
      compiled ??= ajv.compile(schema as object);
      const ok = compiled(data);
      validate.errors = compiled.errors;
      return ok;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate as any;
  };
}
