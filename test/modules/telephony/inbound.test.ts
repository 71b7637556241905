// Inbound configurations (spec 4.12, 2.13) and attachment (3.3), sandbox provider.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestUser, createVerifiedUser } from '../../support/factories.js';
import { type TelephonyTestApp, buyNumber, createTelephonyApp, json, storeObject } from './helpers.js';

let t: TelephonyTestApp;
beforeAll(async () => {
  t = await createTelephonyApp();
});
afterAll(() => t.close());

async function refs(user: TestUser) {
  return {
    agent: await storeObject(t, user, 'agents'),
    contact: await storeObject(t, user, 'contacts'),
    contact2: await storeObject(t, user, 'contacts'),
    campaign: await storeObject(t, user, 'campaigns'),
  };
}

async function createConfig(user: TestUser, r: { agent: string }, extra: Record<string, unknown> = {}) {
  const res = await json(t, 'PUT', '/api/inbound-configurations', user, {
    name: 'Front desk',
    agent: { id: r.agent, type: 'agents' },
    source: { type: 'manual' },
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string };
}

const act = (user: TestUser, configId: string, action: 'attach' | 'detach', numberId: string) =>
  json(t, 'POST', `/api/inbound-configurations/${configId}`, user, { action, phone_number_id: numberId });

describe('inbound configurations', () => {
  it('creates with references from the caller’s stores and de-duplicates humanAgents', async () => {
    const user = await createVerifiedUser(t);
    const r = await refs(user);
    const res = await json(t, 'PUT', '/api/inbound-configurations', user, {
      name: ' Front desk ',
      description: 'after hours',
      agent: { id: r.agent, type: 'agents', label: 'Amy' },
      source: { type: 'campaigns', id: r.campaign },
      humanAgents: [
        { id: r.contact, type: 'contacts', note: 'first' },
        { id: r.contact2, type: 'contacts' },
        { id: r.contact, type: 'contacts', note: 'again' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(String),
      name: 'Front desk',
      description: 'after hours',
      agent: { id: r.agent, type: 'agents', label: 'Amy' },
      source: { type: 'campaigns', id: r.campaign },
      humanAgents: [
        { id: r.contact, type: 'contacts', note: 'first' },
        { id: r.contact2, type: 'contacts' },
      ],
      knowledge_base_id: null,
      phoneNumberIds: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await json(t, 'GET', `/api/inbound-configurations/${created.id}`, user)).json()).toEqual(created);
    expect((await json(t, 'GET', '/api/inbound-configurations', user)).json()).toEqual([created]);
  });

  it('refuses references outside the caller’s stores', async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const r = await refs(user);
    const foreignAgent = await storeObject(t, other, 'agents');
    const base = { name: 'x', agent: { id: r.agent, type: 'agents' }, source: { type: 'manual' } };
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ agent: { id: foreignAgent, type: 'agents' } }, 404],
      [{ agent: { id: r.contact, type: 'agents' } }, 404], // a contact is not an agent
      [{ agent: { id: 'missing', type: 'agents' } }, 404],
      [{ agent: { id: r.agent, type: 'contacts' } }, 400],
      [{ source: { type: 'campaigns', id: r.agent } }, 404],
      [{ source: { type: 'other' } }, 400],
      [{ humanAgents: [{ id: r.agent, type: 'contacts' }] }, 404],
      [{ knowledge_base_id: 'kb_1' }, 404], // no such knowledge base
      [{ name: '  ' }, 400],
    ];
    for (const [change, status] of cases) {
      const res = await json(t, 'PUT', '/api/inbound-configurations', user, { ...base, ...change });
      expect(res.statusCode, JSON.stringify(change)).toBe(status);
    }
    expect((await json(t, 'GET', '/api/inbound-configurations', user)).json()).toEqual([]);
  });

  it('knowledge_base_id: the caller’s own knowledge base is accepted, another user’s or a missing one is 404', async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const r = await refs(user);
    const own = (await json(t, 'PUT', '/api/knowledge-bases', user, { name: 'Manuals' })).json().id as string;
    const foreign = (await json(t, 'PUT', '/api/knowledge-bases', other, { name: 'Theirs' })).json().id as string;
    const created = await createConfig(user, r, { knowledge_base_id: own });
    expect((await json(t, 'GET', `/api/inbound-configurations/${created.id}`, user)).json().knowledge_base_id).toBe(
      own,
    );

    const base = { name: 'x', agent: { id: r.agent, type: 'agents' }, source: { type: 'manual' } };
    for (const id of [foreign, 'kb_missing']) {
      const put = await json(t, 'PUT', '/api/inbound-configurations', user, { ...base, knowledge_base_id: id });
      expect(put.statusCode, id).toBe(404);
      expect(put.json().code).toBe('not_found');
      const patch = await json(t, 'PATCH', `/api/inbound-configurations/${created.id}`, user, {
        knowledge_base_id: id,
      });
      expect(patch.statusCode, id).toBe(404);
      const replace = await json(t, 'PUT', `/api/inbound-configurations/${created.id}`, user, {
        ...base,
        knowledge_base_id: id,
      });
      expect(replace.statusCode, id).toBe(404);
    }
    expect((await json(t, 'GET', `/api/inbound-configurations/${created.id}`, user)).json()).toMatchObject({
      name: 'Front desk',
      knowledge_base_id: own,
    });
    expect((await json(t, 'GET', '/api/inbound-configurations', user)).json()).toHaveLength(1);
    expect(
      (await json(t, 'PATCH', `/api/inbound-configurations/${created.id}`, user, { knowledge_base_id: null })).json()
        .knowledge_base_id,
    ).toBeNull();
  });

  it('PUT replaces, PATCH changes only what is sent', async () => {
    const user = await createVerifiedUser(t);
    const r = await refs(user);
    const agent2 = await storeObject(t, user, 'agents');
    const { id } = await createConfig(user, r, {
      description: 'd',
      humanAgents: [{ id: r.contact, type: 'contacts' }],
    });
    const replaced = await json(t, 'PUT', `/api/inbound-configurations/${id}`, user, {
      name: 'New',
      agent: { id: agent2, type: 'agents' },
      source: { type: 'manual' },
    });
    expect(replaced.json()).toMatchObject({
      id,
      name: 'New',
      agent: { id: agent2 },
      description: null,
      humanAgents: [],
    });
    const patched = await json(t, 'PATCH', `/api/inbound-configurations/${id}`, user, {
      humanAgents: [
        { id: r.contact2, type: 'contacts' },
        { id: r.contact2, type: 'contacts' },
      ],
      source: { type: 'campaigns', id: r.campaign },
    });
    expect(patched.json()).toMatchObject({
      name: 'New',
      agent: { id: agent2 },
      humanAgents: [{ id: r.contact2, type: 'contacts' }],
      source: { type: 'campaigns', id: r.campaign },
    });
    expect(
      (
        await json(t, 'PATCH', `/api/inbound-configurations/${id}`, user, {
          source: { type: 'campaigns', id: r.contact },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await json(t, 'PUT', `/api/inbound-configurations/${id}`, user, {
          name: 'x',
          agent: { id: r.contact, type: 'agents' },
          source: { type: 'manual' },
        })
      ).statusCode,
    ).toBe(404);
    expect((await json(t, 'GET', `/api/inbound-configurations/${id}`, user)).json().name).toBe('New');
  });

  it("another user's configuration is 404 on every route", async () => {
    const owner = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const r = await refs(owner);
    const { id } = await createConfig(owner, r);
    const otherAgent = await storeObject(t, other, 'agents');
    const otherNumber = await buyNumber(t, other);
    expect((await json(t, 'GET', `/api/inbound-configurations/${id}`, other)).statusCode).toBe(404);
    expect((await json(t, 'PATCH', `/api/inbound-configurations/${id}`, other, { name: 'x' })).statusCode).toBe(404);
    expect(
      (
        await json(t, 'PUT', `/api/inbound-configurations/${id}`, other, {
          name: 'x',
          agent: { id: otherAgent, type: 'agents' },
          source: { type: 'manual' },
        })
      ).statusCode,
    ).toBe(404);
    expect((await act(other, id, 'attach', otherNumber)).statusCode).toBe(404);
    expect((await json(t, 'DELETE', `/api/inbound-configurations/${id}`, other)).statusCode).toBe(404);
    expect((await json(t, 'GET', '/api/inbound-configurations', other)).json()).toEqual([]);
    expect((await json(t, 'GET', `/api/inbound-configurations/${id}`, owner)).json().name).toBe('Front desk');
  });
});

describe('attach and detach (spec 3.3)', () => {
  it('attaches a voice number, refuses it elsewhere, detaches only through its configuration', async () => {
    const user = await createVerifiedUser(t);
    const r = await refs(user);
    const a = await createConfig(user, r);
    const b = await createConfig(user, r);
    const number = await buyNumber(t, user);

    const attached = await act(user, a.id, 'attach', number);
    expect(attached.statusCode).toBe(200);
    expect(attached.json()).toMatchObject({ id: number, inboundConfigurationId: a.id });
    expect((await json(t, 'GET', `/api/inbound-configurations/${a.id}`, user)).json().phoneNumberIds).toEqual([number]);
    expect((await act(user, a.id, 'attach', number)).statusCode).toBe(200); // again: no-op

    const elsewhere = await act(user, b.id, 'attach', number);
    expect(elsewhere.statusCode).toBe(409);
    expect(elsewhere.json().code).toBe('conflict');
    expect((await act(user, b.id, 'detach', number)).statusCode).toBe(409);

    expect((await act(user, a.id, 'detach', number)).json()).toMatchObject({ inboundConfigurationId: null });
    expect((await act(user, a.id, 'detach', number)).statusCode).toBe(409);
    expect((await act(user, b.id, 'attach', number)).json().inboundConfigurationId).toBe(b.id);
  });

  it('refuses an SMS-only (outbound) number with 409 and someone else’s number with 404', async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const r = await refs(user);
    const c = await createConfig(user, r);
    const smsOnly = await buyNumber(t, user, (o) => !o.capabilities.voice);
    const res = await act(user, c.id, 'attach', smsOnly);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('conflict');
    const foreign = await buyNumber(t, other);
    expect((await act(user, c.id, 'attach', foreign)).statusCode).toBe(404);
    expect((await json(t, 'GET', `/api/phone-numbers/${foreign}`, other)).json().inboundConfigurationId).toBeNull();
    expect(
      (await json(t, 'POST', `/api/inbound-configurations/${c.id}`, user, { action: 'move', phone_number_id: smsOnly }))
        .statusCode,
    ).toBe(400);
  });

  it('concurrent attaches of one number to two configurations: exactly one wins', async () => {
    const user = await createVerifiedUser(t);
    const r = await refs(user);
    const configs = [await createConfig(user, r), await createConfig(user, r), await createConfig(user, r)];
    const number = await buyNumber(t, user);
    const answers = await Promise.all(configs.map((c) => act(user, c.id, 'attach', number)));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409, 409]);
    const winner = configs[answers.findIndex((a) => a.statusCode === 200)].id;
    expect((await json(t, 'GET', `/api/phone-numbers/${number}`, user)).json().inboundConfigurationId).toBe(winner);
  });

  it('deleting a configuration detaches its numbers', async () => {
    const user = await createVerifiedUser(t);
    const r = await refs(user);
    const c = await createConfig(user, r);
    const number = await buyNumber(t, user);
    await act(user, c.id, 'attach', number);
    expect((await json(t, 'DELETE', `/api/inbound-configurations/${c.id}`, user)).statusCode).toBe(204);
    expect((await json(t, 'GET', `/api/inbound-configurations/${c.id}`, user)).statusCode).toBe(404);
    expect((await json(t, 'GET', `/api/phone-numbers/${number}`, user)).json().inboundConfigurationId).toBeNull();
  });
});
