// The SDK's pathway helpers against a listening server: the typed builder
// (and what it refuses at compile time), validate with warnings and with every
// error, pathways stored encrypted in the conversational-pathways store
// (listed, read, updated, deleted; an invalid one never stored), and a stored
// pathway named on a web call and on a signed call session, another user's
// refused with 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PathwayInvalidError,
  WorkspaceApiError,
  WorkspaceClient,
  definePathway,
  pathway,
  pathwayRef,
  signCallRequest,
  type PathwayDocument,
} from '../../sdk/src/index.js';
import { examplePathway } from '../../src/modules/pathways/examples.js';
import { callConfig } from '../modules/calls/support.js';
import { type TelephonyTestApp, createTelephonyApp } from '../modules/telephony/helpers.js';
import { createFundedUser, createVerifiedUser } from '../support/factories.js';

let t: TelephonyTestApp;
beforeAll(async () => {
  t = await createTelephonyApp({ config: callConfig() }, { realBilling: true });
});
afterAll(() => t.close());

const client = (token: string) => new WorkspaceClient({ baseUrl: t.publicUrl, token });

/** The docs' example pathway, written with the builder. */
const orderStatus = () =>
  pathway('Order status')
    .variable('order_number', { type: 'string', description: 'The order number the caller reads out' })
    .variable('order_status', { type: 'enum', values: ['shipped', 'processing', 'unknown'] })
    .conversation('greet', {
      say: 'Hi {{contact.name}}, this is Acme. What is your order number?',
      extract: ['order_number'],
    })
    .webhook('lookup', {
      url: 'https://example.com/orders/status',
      method: 'POST',
      body: '{"order": "{{order_number}}"}',
      assign: { order_status: '$.status' },
    })
    .end('shipped', { say: 'Good news: order {{order_number}} has shipped. Goodbye!' })
    .transfer('person', { say: 'Let me put you through to a colleague.' })
    .edge('greet', 'lookup')
    .edge('lookup', 'shipped', { if: { var: 'order_status', op: 'eq', value: 'shipped' } })
    .edge('lookup', 'person')
    .global('person', { when: 'The caller asks for a person', keywords: ['agent', 'person', 'human'] });

describe('SDK pathway helpers', () => {
  it('builds the documented example exactly, and refuses what it can check alone', () => {
    expect(orderStatus().build()).toEqual(examplePathway);
    expect(() => pathway('Empty').build()).toThrow('at least one node');
    expect(() => pathway('Twice').end('a').end('a').build()).toThrow('two nodes have the id "a"');
    // Compile-time checks (tsc --noEmit covers tests): declared variables and known node ids only.
    const compileOnly = () => {
      const b = pathway('Typed').variable('email', { type: 'email' }).conversation('ask').end('bye');
      // @ts-expect-error an undeclared variable
      b.conversation('again', { extract: ['phone'] });
      // @ts-expect-error an edge to a node not added
      b.edge('ask', 'nowhere');
      // @ts-expect-error a condition on an undeclared variable
      b.edge('ask', 'bye', { if: { var: 'name', op: 'exists' } });
      // @ts-expect-error a webhook node needs its url and method
      b.webhook('hook', {});
      b.edge('ask', 'bye', { if: { var: 'email', op: 'exists' } });
    };
    expect(typeof compileOnly).toBe('function');
  });

  it('validates through the API: valid with its warnings, or not valid with every error and its path', async () => {
    const user = await createVerifiedUser(t);
    const sdk = client(user.token);
    expect(await sdk.pathways.validate(orderStatus().build())).toEqual({ valid: true, warnings: [] });
    const doubtful = pathway('Doubtful').conversation('ask').end('bye').edge('ask', 'bye', { when: 'They are done' });
    expect(await sdk.pathways.validate(doubtful.build())).toEqual({
      valid: true,
      warnings: [{ path: '/edges/0/keywords', message: expect.stringContaining('sandbox') }],
    });
    const broken = definePathway({
      name: 'Broken',
      start: 'greet',
      nodes: [
        { id: 'greet', type: 'conversation', say: 'Hi {{first_name}}' },
        { id: 'island', type: 'end' },
      ],
      edges: [{ from: 'greet', to: 'nowhere' }],
    });
    const check = await sdk.pathways.validate(broken);
    expect(check.valid).toBe(false);
    if (check.valid) return;
    expect(check.errors.map((e) => e.path).sort()).toEqual(['/edges/0/to', '/nodes/0/say', '/nodes/1']);
    // Not a pathway problem: thrown as the API error it is.
    const anonymous = new WorkspaceClient({ baseUrl: t.publicUrl });
    await expect(anonymous.pathways.validate(broken)).rejects.toMatchObject({ status: 401 });
  });

  it('stores a pathway encrypted in the conversational-pathways store, lists, reads, updates and deletes it; an invalid one is never stored', async () => {
    const user = await createVerifiedUser(t);
    const sdk = client(user.token);
    const created = await sdk.pathways.create(orderStatus().build());
    expect(created.warnings).toEqual([]);
    expect(created.value).toEqual(examplePathway);
    // The service holds ciphertext only; it opens the record with the store's key, as a call does.
    const raw = await sdk.objects.get(created.id);
    expect(Buffer.from(raw.content, 'hex').toString('utf8')).not.toContain('Order status');
    const root = await sdk.root();
    expect(raw.relatedId).toBe(root.stores['conversational-pathways'].id);
    const opened = await t.services.data.records.read(user.id, 'conversational-pathways', created.id);
    expect(JSON.parse(opened.toString('utf8'))).toEqual(examplePathway);

    expect((await sdk.pathways.list()).map((r) => [r.id, r.value.name])).toEqual([[created.id, 'Order status']]);
    expect((await sdk.pathways.get(created.id)).value).toEqual(examplePathway);

    const renamed: PathwayDocument = { ...examplePathway, name: 'Order status v2' };
    const updated = await sdk.pathways.update(created.id, renamed, { ifMatch: created.version });
    expect(updated.version).toBeGreaterThan(created.version);
    expect((await sdk.pathways.get(created.id)).value.name).toBe('Order status v2');
    const stale = await sdk.pathways.update(created.id, renamed, { ifMatch: created.version }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(WorkspaceApiError);
    expect((stale as WorkspaceApiError).status).toBe(412);

    const refused = await sdk.pathways.create({ ...examplePathway, start: 'nowhere' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PathwayInvalidError);
    expect((refused as PathwayInvalidError).errors.map((e) => e.path)).toContain('/start');
    await expect(sdk.pathways.update(created.id, { ...renamed, nodes: [] })).rejects.toBeInstanceOf(
      PathwayInvalidError,
    );
    expect(await sdk.pathways.list()).toHaveLength(1);
    expect((await sdk.pathways.get(created.id)).value.name).toBe('Order status v2');

    await sdk.pathways.delete(created.id);
    expect(await sdk.pathways.list()).toEqual([]);
  });

  it("names a stored pathway on a web call (pathwayId) and on a signed call session (pathwayRef); another user's is 404", async () => {
    const owner = await createFundedUser(t);
    const sdk = client(owner.token);
    const stored = await sdk.pathways.create(
      pathway('Hello')
        .conversation('hello', { say: 'Hello from the pathway.', prompt: 'Greet the caller.' })
        .end('bye', { say: 'Goodbye!' })
        .edge('hello', 'bye', { when: 'The caller says goodbye', keywords: ['bye', 'goodbye'] })
        .build(),
    );
    const web = await sdk.calls.startWeb({ agent: { name: 'Amy', prompt: 'Be brief.' }, pathwayId: stored.id });
    expect(web.sessionId).toEqual(expect.any(String));

    const stranger = client((await createVerifiedUser(t)).token);
    const foreign = await stranger.calls
      .startWeb({ agent: { name: 'Amy', prompt: 'Be brief.' }, pathwayId: stored.id })
      .catch((e: unknown) => e);
    expect(foreign).toMatchObject({ status: 404 });
    const inline = await stranger.calls
      .startWeb({ agent: { name: 'Amy', prompt: 'Be brief.' }, pathway: { ...stored.value, start: 'nowhere' } })
      .catch((e: unknown) => e);
    expect(inline).toMatchObject({ status: 422, code: 'invalid_pathway' });

    // A signed call session naming it by { id }: accepted (the session exists); another user's server cannot name it.
    const offers = (await (
      await sdk.http.send(`${t.publicUrl}/api/phone-numbers/search/sandbox?country=US&type=local`)
    ).json()) as Array<{ capabilities: { voice: boolean }; addressRequirements: string; price: { jwt: string } }>;
    const offer = offers.find((o) => o.capabilities.voice && o.addressRequirements === 'none')!;
    const bought = await sdk.http.send(`${t.publicUrl}/api/phone-numbers`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jwt: offer.price.jwt }),
    });
    expect(bought.status).toBe(200);
    const server = await sdk.servers.register({ name: 'sdk-pathways', mode: 'generate' });
    const jwt = await signCallRequest(server.privateKey!, {
      agent: { name: 'Amy' },
      contact: { name: 'Grace', phone: '+14155550123' },
      type: 'pathway',
      pathway: pathwayRef(stored),
      variables: { order_number: 'A-1' },
    });
    const { sessionId } = await sdk.calls.start({ server: server.name, jwt });
    expect((await sdk.calls.get(sessionId)).id).toBe(sessionId);
  }, 60_000);
});
