// The success answers of the merged areas (billing, personas, integrations,
// telephony, knowledge, pathways) match the schemas openapi.json documents for them.
// The fuzz test mostly reaches error answers (its user owns nothing); this
// walks the happy paths with real (sandbox) providers and billing, and checks
// every 2xx JSON answer against its operation's documented schema, and that
// the status is one the operation declares.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestUser, bearer, createVerifiedUser } from '../support/factories.js';
import { examplePathway } from '../../src/modules/pathways/examples.js';
import { multipartForm } from '../support/multipart.js';
import { type TelephonyTestApp, createTelephonyApp, storeObject } from '../modules/telephony/helpers.js';

type Json = Record<string, any>;
type Method = 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';

let t: TelephonyTestApp;
let user: TestUser;
let doc: Json;
let ajv: Ajv2020;
const checked = new Set<string>();

beforeAll(async () => {
  t = await createTelephonyApp({}, { realBilling: true });
  user = await createVerifiedUser(t);
  doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
});
afterAll(() => t.close());

const rewrite = (node: unknown): unknown =>
  Array.isArray(node)
    ? node.map(rewrite)
    : node && typeof node === 'object'
      ? Object.fromEntries(
          Object.entries(node).map(([k, v]) => [
            k,
            k === '$ref' && typeof v === 'string' ? v.replace('#/components', 'doc#/components') : rewrite(v),
          ]),
        )
      : node;

/** Sends the request, expects a 2xx, and checks it against the documented answer of `operation` ("METHOD /path/{param}"). */
async function call(
  operation: string,
  url: string,
  options: { payload?: unknown; headers?: Record<string, string>; status?: number } = {},
): Promise<Json> {
  const [method, path] = operation.split(' ') as [Method, string];
  const op = doc.paths[path]?.[method.toLowerCase()];
  expect(op, `${operation} is documented`).toBeDefined();
  const res = await t.app.inject({
    method,
    url,
    headers: { ...bearer(user.token), ...options.headers },
    ...(options.payload === undefined ? {} : { payload: options.payload as object }),
  });
  expect(res.statusCode, `${operation}: ${res.body.slice(0, 300)}`).toBe(options.status ?? res.statusCode);
  expect(res.statusCode, `${operation}: ${res.body.slice(0, 300)}`).toBeLessThan(300);
  expect(Object.keys(op.responses), `${operation}: status ${res.statusCode} declared`).toContain(
    String(res.statusCode),
  );
  const schema = op.responses[res.statusCode]?.content?.['application/json']?.schema;
  if (!schema) return {};
  const body = res.json();
  const validate = ajv.compile(rewrite(schema) as object);
  expect(validate(body), `${operation}: ${JSON.stringify(validate.errors)} ${res.body.slice(0, 300)}`).toBe(true);
  checked.add(operation);
  return body;
}

describe('documented success answers', () => {
  it('billing', async () => {
    await call('GET /api/credits', '/api/credits');
    const { url } = await call('POST /api/credits/add', '/api/credits/add?amount=25');
    expect((await t.app.inject({ method: 'POST', url: new URL(url).pathname })).statusCode).toBe(200);
    expect((await call('GET /api/billing/state', '/api/billing/state')).hasCard).toBe(true);
    const plan = await call('POST /api/billing/plan', '/api/billing/plan', { payload: { plan: 'starter' } });
    expect((await t.app.inject({ method: 'POST', url: new URL(plan.url).pathname })).statusCode).toBe(200);
    const state = await call('GET /api/billing/state', '/api/billing/state');
    expect(state.plan?.key).toBe('starter');
    await call('GET /api/billing/portal', '/api/billing/portal');
    await call('GET /api/pricing/voice-countries', '/api/pricing/voice-countries');
  });

  it('personas and integrations', async () => {
    const personas = await call('GET /api/personas', '/api/personas');
    await call('GET /api/persona/list-external', '/api/persona/list-external');
    await call('GET /api/persona/{id}', `/api/persona/${personas[0].id}`);
    const created = await call('PUT /api/integrations', '/api/integrations', {
      payload: { type: 'calendly', data: { accessToken: 'sandbox-token-0123456789', eventTypeSlug: '30min' } },
    });
    expect((await call('GET /api/integrations', '/api/integrations')).map((i: Json) => i.id)).toContain(created.id);
    await call('DELETE /api/integrations/{id}', `/api/integrations/${created.id}`, { status: 204 });
  });

  it('phone numbers, inbound configurations and SMS', async () => {
    await call('GET /api/phone-numbers/search', '/api/phone-numbers/search');
    await call('GET /api/phone-numbers/search/{provider}/countries', '/api/phone-numbers/search/sandbox/countries');
    const offers = await call(
      'GET /api/phone-numbers/search/{provider}',
      '/api/phone-numbers/search/sandbox?country=US&type=local',
    );
    const offer = offers.find(
      (o: Json) => o.capabilities.voice && o.capabilities.sms && o.addressRequirements === 'none',
    );
    expect(offer).toBeDefined();
    await call('PUT /api/phone-numbers/address', '/api/phone-numbers/address', {
      payload: {
        street: '1 Market Street',
        city: 'San Francisco',
        region: 'CA',
        postalCode: '94105',
        isoCountry: 'US',
        provider: 'sandbox',
      },
    });
    const { id: numberId } = await call('PUT /api/phone-numbers', '/api/phone-numbers', {
      payload: { jwt: offer.price.jwt, name: 'Support line' },
      headers: { 'idempotency-key': 'answers-buy' },
    });
    await call('GET /api/phone-numbers', '/api/phone-numbers');
    await call('GET /api/phone-numbers/{id}', `/api/phone-numbers/${numberId}`);
    await call('PATCH /api/phone-numbers/{id}', `/api/phone-numbers/${numberId}`, { payload: { description: null } });

    const agent = await storeObject(t, user, 'agents');
    const contact = await storeObject(t, user, 'contacts');
    const body = {
      name: 'Front desk',
      agent: { id: agent, type: 'agents' },
      source: { type: 'manual' },
      humanAgents: [{ id: contact, type: 'contacts' }],
    };
    const config = await call('PUT /api/inbound-configurations', '/api/inbound-configurations', { payload: body });
    await call('GET /api/inbound-configurations', '/api/inbound-configurations');
    await call('GET /api/inbound-configurations/{id}', `/api/inbound-configurations/${config.id}`);
    await call('PUT /api/inbound-configurations/{id}', `/api/inbound-configurations/${config.id}`, {
      payload: { ...body, description: 'Office hours' },
    });
    await call('PATCH /api/inbound-configurations/{id}', `/api/inbound-configurations/${config.id}`, {
      payload: { name: 'Front desk (evenings)', humanAgents: [] },
    });
    const attached = await call('POST /api/inbound-configurations/{id}', `/api/inbound-configurations/${config.id}`, {
      payload: { action: 'attach', phone_number_id: numberId },
    });
    expect(attached.inboundConfigurationId).toBe(config.id);
    expect(
      (await call('GET /api/inbound-configurations/{id}', `/api/inbound-configurations/${config.id}`)).phoneNumberIds,
    ).toEqual([numberId]);

    const sms = await call('POST /api/sms/messages', '/api/sms/messages', {
      payload: { phoneNumberId: numberId, to: '+14155550123', body: 'Your table is ready' },
    });
    await call('GET /api/sms/messages', `/api/sms/messages?phoneNumberId=${numberId}`);
    await call('GET /api/sms/messages/{id}', `/api/sms/messages/${sms.id}`);

    await call('DELETE /api/inbound-configurations/{id}', `/api/inbound-configurations/${config.id}`, { status: 204 });
    await call('DELETE /api/phone-numbers/{id}', `/api/phone-numbers/${numberId}`, { status: 204 });
  });

  it('knowledge bases', async () => {
    const base = await call('PUT /api/knowledge-bases', '/api/knowledge-bases', {
      payload: { name: 'Support', description: 'Product manuals and FAQ' },
    });
    await call('GET /api/knowledge-bases', '/api/knowledge-bases');
    await call('PATCH /api/knowledge-bases/{id}', `/api/knowledge-bases/${base.id}`, {
      payload: { description: 'Manuals' },
    });
    const form = multipartForm([
      {
        field: 'files',
        filename: 'manual.txt',
        contentType: 'text/plain',
        content: Buffer.from('To reset the device, hold the power button for ten seconds.\n\nThe light blinks twice.'),
      },
    ]);
    const [document] = (await call('POST /api/knowledge-bases/{id}', `/api/knowledge-bases/${base.id}`, {
      payload: form.payload,
      headers: form.headers,
    })) as unknown as Json[];
    await call('GET /api/knowledge-bases/{id}', `/api/knowledge-bases/${base.id}`);
    const matches = await call('POST /api/knowledge-bases/{id}/search', `/api/knowledge-bases/${base.id}/search`, {
      payload: { text: 'reset the device' },
    });
    expect(matches.length).toBeGreaterThan(0);
    await call('DELETE /api/knowledge-bases/{id}/{documentId}', `/api/knowledge-bases/${base.id}/${document.id}`, {
      status: 204,
    });
    await call('DELETE /api/knowledge-bases/{id}', `/api/knowledge-bases/${base.id}`, { status: 204 });
  });

  it('pathways', async () => {
    const checkedPathway = await call('POST /api/pathways/validate', '/api/pathways/validate', {
      payload: { ...examplePathway, global: [{ to: 'person', when: 'The caller asks for a person' }] },
    });
    expect(checkedPathway.warnings).toHaveLength(1);
  });

  it('checked a JSON answer of every operation walked', () => {
    expect(checked.size).toBeGreaterThan(30);
  });
});
