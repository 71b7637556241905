// The validators add the shared schemas without checking them against the JSON
// Schema meta-schema (a start-up cost): this is that check, for every shared
// schema the app registers, and proof that a route's own schema is still
// checked when it is first compiled.
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createValidatorCompiler } from '../../src/http/validation.js';
import { type TestApp, createTestApp } from '../support/app.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('the validators', () => {
  it('every shared schema is valid JSON Schema', () => {
    const shared = Object.entries(t.app.getSchemas());
    expect(shared.length).toBeGreaterThan(0);
    const ajv = addFormats(new Ajv({ strict: false, allowUnionTypes: true }));
    ajv.addKeyword({ keyword: 'example' });
    for (const [id, schema] of shared) {
      expect(ajv.validateSchema(schema as object), `${id}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
    }
  });

  it("a route's own schema that is not valid JSON Schema fails when first compiled", () => {
    const compile = createValidatorCompiler(() => ({}));
    const validate = compile({
      schema: { type: 'object', properties: { n: { type: 'nonsense' } } },
      httpPart: 'body',
      method: 'POST',
      url: '/x',
    }) as (data: unknown) => boolean;
    expect(() => validate({ n: 1 })).toThrow(/schema is invalid/);
  });
});
