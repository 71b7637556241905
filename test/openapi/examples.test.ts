// Every operation's documented answers, success and error alike, are what a
// strict client accepts: each example of each response is checked against its
// schema by a validator built from the document with closed object schemas
// (every object schema that lists its properties gets additionalProperties:
// false in the validator's copy), so an example field the schema does not
// declare (a `checkoutUrl` the 409 forgot, an event field the payload schema
// lacks) fails here. Free-form maps (no properties listed, or a schema for
// additional properties) stay open.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../support/app.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

let t: TestApp;
let doc: Json;
beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
});
afterAll(() => t.close());

/** The validator's copy of a schema: objects with listed properties closed, $refs pointing into the document. */
export function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$ref' && typeof value === 'string') out.$ref = value.replace('#/components', 'doc#/components');
    else if (key === 'examples' || key === 'example') out[key] = value;
    else out[key] = closed(value);
  }
  const isObject = out.type === 'object' || (out.properties && out.type === undefined);
  if (
    isObject &&
    out.properties &&
    Object.keys(out.properties).length > 0 &&
    (out.additionalProperties === undefined || typeof out.additionalProperties === 'boolean')
  )
    out.additionalProperties = false;
  return out;
}

function validator(document: Json): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: 'doc', components: closed(document.components) });
  return ajv;
}

/** Every example of a media object: `example`, each of `examples`, and the schema's own. */
function examplesOf(media: Json): Array<{ name: string; value: unknown }> {
  const out: Array<{ name: string; value: unknown }> = [];
  if (media.example !== undefined) out.push({ name: 'example', value: media.example });
  for (const [name, ex] of Object.entries<Json>(media.examples ?? {})) out.push({ name, value: ex.value });
  for (const [i, value] of (media.schema?.examples ?? []).entries())
    out.push({ name: `schema example ${i + 1}`, value });
  return out;
}

describe('documented examples under closed schemas', () => {
  it('every success and error example of every operation validates against its response schema', () => {
    const ajv = validator(doc);
    const failures: string[] = [];
    let success = 0;
    let errors = 0;
    const withoutSuccessExample: string[] = [];
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        let successShown = false;
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
            if (!media.schema) continue;
            const validate = ajv.compile(closed(media.schema) as object);
            for (const { name, value } of examplesOf(media)) {
              if (status.startsWith('2')) {
                success += 1;
                successShown = true;
              } else errors += 1;
              if (!validate(value))
                failures.push(
                  `${method.toUpperCase()} ${path} ${status} ${type} ${name}: ${ajv.errorsText(validate.errors)}`,
                );
            }
          }
          // 204s, redirects and a WebSocket's 101 have no body to show; pages and files (HTML, audio) are not JSON answers a client parses.
          if (
            (status === '101' || status.startsWith('2') || status.startsWith('3')) &&
            !response.content?.['application/json'] &&
            !response.content?.['text/event-stream']
          )
            successShown = true;
        }
        if (!successShown) withoutSuccessExample.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(failures).toEqual([]);
    expect(withoutSuccessExample).toEqual([]);
    expect(success).toBeGreaterThanOrEqual(75);
    expect(errors).toBeGreaterThan(500);
  });

  it('the closed validator refuses a field an answer does not declare (it is not vacuous)', () => {
    const ajv = validator(doc);
    const conflict = doc.paths['/api/phone-numbers'].put.responses['409'].content['application/json'].schema;
    const validate = ajv.compile(closed(conflict) as object);
    expect(
      validate({ message: 'm', code: 'payment_method_required', checkoutUrl: 'https://checkout.example.com/x' }),
    ).toBe(true);
    expect(
      validate({ message: 'm', code: 'payment_method_required', checkoutURL: 'https://checkout.example.com/x' }),
    ).toBe(false);
    const frame = ajv.compile(
      closed(doc.paths['/api/events/{type}'].get.responses['200'].content['text/event-stream'].schema) as object,
    );
    expect(
      frame([{ id: '1', event: 'object_deleted', data: { object_id: 'o', deleted_at: '2026-11-26T10:00:00.000Z' } }]),
    ).toBe(true);
    expect(
      frame([
        {
          id: '1',
          event: 'object_deleted',
          data: { object_id: 'o', deleted_at: '2026-11-26T10:00:00.000Z', extra: 1 },
        },
      ]),
    ).toBe(false);
    expect(
      frame([
        {
          id: '1',
          event: 'object_deleted',
          data: { id: 'o', key_id: null, content: '', auth_tag: '', iv: null, metadata: { size: 0, kind: 'object' } },
        },
      ]),
    ).toBe(false);
  });
});
