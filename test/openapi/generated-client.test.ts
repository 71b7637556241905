// A client generated from the document by a tool nobody here wrote
// (openapi-typescript) is enough to use every area: a script that reads what
// integrators read (success bodies, error fields such as checkoutUrl and
// version, response headers, event payloads by type, optional parameters and
// bodies) type-checks against the generated types without a single cast.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { type OpenAPI3 } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../support/app.js';

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await createTestApp();
  dir = mkdtempSync(join(tmpdir(), 'generated-client-'));
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Uses the generated types the way an integrator's code would; no `as`, no `any`. */
const script = `
import type { components, operations, paths } from './api.js';

type Json<O extends keyof operations, S extends keyof operations[O]['responses']> = operations[O]['responses'][S] extends { content: { 'application/json': infer B } } ? B : never;
type Headers<O extends keyof operations, S extends keyof operations[O]['responses']> = operations[O]['responses'][S] extends { headers: infer H } ? H : never;

declare function body<T>(): T;
const out: Array<string | number | boolean | null | undefined> = [];

// health: 503 when the database is away, with Retry-After
out.push(body<Json<'getHealth', 200>>().status, body<Headers<'getHealth', 503>>()['Retry-After']);

// auth: sign in, verify a phone with no body at all, rate limits say when to retry
const login = body<Json<'login', 200>>();
out.push(login.token, login.status);
const verifyWithoutBody: Pick<operations['requestPhoneVerification'], 'requestBody'> = {};
out.push(Object.keys(verifyWithoutBody).length, body<Json<'requestPhoneVerification', 429>>().retryAfter);
out.push(body<Json<'requestTwoFactorSetup', 409>>().reset);

// api keys
out.push(body<Json<'createApiKey', 200>>().key);

// data: the ETag for If-Match, and the current version on a 412
out.push(body<Headers<'getObject', 200>>().etag, body<Json<'updateObject', 412>>().version + 1);
const related: paths['/api/objects/{id}/related']['get']['parameters']['query'] = {};
out.push(Object.keys(related ?? {}).length, body<Headers<'listRelatedObjects', 200>>()['x-next-after']);

// events: a ticket, then frames typed by their event
const ticket = body<Json<'createEventTicket', 200>>();
out.push(ticket.ticket, ticket.expiresAt);
// The ticket is the operation's eventTicket security scheme (a query apiKey), sent next to the filters.
const streamQuery: NonNullable<operations['streamEvents']['parameters']['query']> = { lastEventId: '42' };
out.push(streamQuery.lastEventId);
type Frame = operations['streamEvents']['responses'][200]['content']['text/event-stream'][number];
function onFrame(frame: Frame): void {
  if (frame.event === 'object_created') out.push(frame.data.id, frame.data.related_object_id, frame.data.metadata.kind);
  if (frame.event === 'object_updated') out.push(frame.data.object_id, frame.data.version);
  if (frame.event === 'call_status') out.push(frame.data.session_id, frame.data.status, frame.data.outcome, frame.data.transcript?.[0]?.role);
  if (frame.event === 'call_transcript') out.push(frame.data.text, frame.data.role);
  if (frame.event === 'sms_status') out.push(frame.data.message_id, frame.data.error_code);
  if (frame.event === 'publish' || frame.event === 'unpublish') out.push(frame.data.object_id, frame.data.related_id);
  if (frame.event === 'key_created' || frame.event === 'key_deleted') out.push(frame.data.key_id);
  if (frame.event === 'object_deleted') out.push(frame.data.deleted_at);
}
onFrame(body<Frame>());
const created: components['schemas']['ObjectCreatedEvent'] = body<components['schemas']['ObjectCreatedEvent']>();
out.push(created.content, created.iv);

// connect: counts in headers on success, in the body on failure
out.push(body<Headers<'runConnectorJob', 204>>()['x-objects-written'], body<Json<'runConnectorJob', 402>>().code);
out.push(body<Json<'runConnectorJob', 502>>().written, body<Headers<'runConnectorJob', 502>>()['x-objects-written']);

// phone numbers: search without a limit, buy (checkoutUrl on 409), retry safely
const search: operations['searchPhoneNumbers']['parameters']['query'] = { country: 'US' };
out.push(search.country);
const conflict = body<Json<'purchasePhoneNumber', 409>>();
if (conflict.code === 'payment_method_required') out.push(conflict.checkoutUrl);
out.push(body<Headers<'purchasePhoneNumber', 200>>()['Idempotent-Replayed'], body<Headers<'purchasePhoneNumber', 409>>()['Retry-After']);

// inbound configurations
out.push(body<Json<'getInboundConfiguration', 200>>().source.type);

// sms: list without a limit, 402 when the balance does not cover it
const smsQuery: operations['listSms']['parameters']['query'] = {};
out.push(Object.keys(smsQuery ?? {}).length, body<Json<'sendSms', 402>>().code, body<Json<'sendSms', 200>>().id);

// calls: the session id header, 402 and 429 concurrency_limit
out.push(body<Headers<'startCallSession', 204>>()['x-session-id'], body<Json<'startCallSession', 402>>().code, body<Json<'startCallSession', 429>>().message);
out.push(body<Json<'getCall', 200>>().status);

// knowledge: what the quota allows
const quota = body<Json<'uploadKnowledgeDocuments', 413>>();
out.push(quota.used?.documents, quota.allowed?.bytes, quota.file);

// personas: the daily preview quota
const preview = body<Json<'playPersona', 429>>();
out.push(preview.retryAfter, preview.limit, preview.remaining, body<Json<'getPersona', 200>>().settings.voiceId);

// integrations
out.push(body<Json<'createIntegration', 200>>().id);

// billing: the open checkout of another plan
const plan = body<Json<'choosePlan', 409>>();
out.push(plan.url, plan.plan, plan.expiresAt, body<Json<'getCredits', 200>>().amount);

// webhooks: deliveries without a limit, the audio server's invalid_token, Stripe's event
const deliveries: operations['listWebhookDeliveries']['parameters']['query'] = {};
out.push(Object.keys(deliveries ?? {}).length, body<Json<'receiveAudioReport', 400>>().code);
const stripeEvent: NonNullable<operations['receiveStripeWebhook']['requestBody']>['content']['application/json'] = body<NonNullable<operations['receiveStripeWebhook']['requestBody']>['content']['application/json']>();
out.push(stripeEvent.id, stripeEvent.type, stripeEvent.data.object.id === undefined);

// sandbox: the code of the verification SMS
const [sms] = body<Json<'listSandboxOutbox', 200>>();
out.push(sms?.data.code, sms?.data.messageSid);

export { out };
`;

describe('a client generated by openapi-typescript', () => {
  it('type-checks a script covering every area without a cast', async () => {
    expect(script).not.toMatch(/\bas\s|\bany\b|@ts-|!\./);
    const document = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as OpenAPI3;
    writeFileSync(join(dir, 'api.ts'), await openapiTS(document));
    writeFileSync(join(dir, 'client.ts'), script);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2022'],
          types: [],
          skipLibCheck: true,
        },
        files: ['client.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(process.cwd(), 'node_modules/typescript/bin/tsc'), '-p', dir], {
      encoding: 'utf8',
    });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 60_000);
});
