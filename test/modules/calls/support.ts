// Helpers for call tests: an assembled call, billing's real account with its
// usage calls counted, and a calls service over a test app's pieces with it.
import { createDecipheriv } from 'node:crypto';
import { expect } from 'vitest';
import type { Config } from '../../../src/config.js';
import { generateWebhookSecret } from '../../../src/lib/standard-webhooks.js';
import { callPricing, createCallServices } from '../../../src/modules/calls/create-services.js';
import type { CallBilling } from '../../../src/modules/calls/charges.js';
import type { AssembledCall } from '../../../src/providers/audio/interface.js';
import type { TestApp } from '../../support/app.js';
import type { TestUser } from '../../support/factories.js';
import { client } from '../data/support.js';

/** The secret the test apps verify audio reports with (and the sandbox signs with). */
export const AUDIO_SECRET = generateWebhookSecret();

/** Config of a test app whose sandbox audio server plays calls quickly, and whose webhook worker polls often. */
export const callConfig = (audio: Partial<Config['audio']> = {}): Partial<Config> => ({
  audio: { url: null, secret: AUDIO_SECRET, sandboxStepMs: 20, sandboxCalls: 'timer', recording: true, ...audio },
  webhooks: { allowPrivate: true, timeoutMs: 5000, pollIntervalMs: 20 },
});

export const assembledCall = (overrides: Partial<AssembledCall> = {}): AssembledCall => ({
  to: '+14155550123',
  from: '+14155550100',
  agent: { name: 'Amy' },
  contact: { name: 'Grace' },
  systemPrompt: 'You are Amy, calling Grace to confirm tomorrow’s appointment.',
  firstMessage: 'Hello Grace, this is Amy from the clinic.',
  voice: { provider: 'local', voiceId: 'en-us' },
  tools: [
    {
      name: 'search_knowledge',
      description: 'Search the knowledge base',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  ],
  ...overrides,
});

/** Billing's real account, counting what calls record as usage. */
export class CountingUsage implements CallBilling {
  readonly calls: Array<{ userId: string; kind: string; quantity: number; ref: string }> = [];
  constructor(private readonly inner: CallBilling) {}
  async recordUsage(
    userId: string,
    kind: Parameters<CallBilling['recordUsage']>[1],
    quantity: number,
    ref: string,
  ): Promise<void> {
    this.calls.push({ userId, kind, quantity, ref });
    await this.inner.recordUsage(userId, kind, quantity, ref);
  }
  balanceCents = (userId: string) => this.inner.balanceCents(userId);
  reserve = (userId: string, cents: number, ref: string) => this.inner.reserve(userId, cents, ref);
  settle = (ref: string, cents: number) => this.inner.settle(ref, cents);
  refund = (ref: string) => this.inner.refund(ref);
  allowances: CallBilling['allowances'] = (userId, kinds) => this.inner.allowances(userId, kinds);
}

/** A calls service over the app's database, events, webhooks, audio provider and data plane, charging through `billing`. */
export function callsWithUsage(t: TestApp, billing: CallBilling) {
  return callServicesWith(t, billing).calls;
}

/** callsWithUsage's services: the calls service and its charges. */
export function callServicesWith(t: TestApp, billing: CallBilling) {
  const s = t.services;
  return createCallServices({
    db: t.database.db,
    dialect: t.database.dialect,
    eventRecorder: s.events.eventRecorder,
    webhooks: s.webhooks.webhooks,
    audio: s.providers.audio,
    data: s.data,
    billing,
    pricing: callPricing(t.config, s.billing.catalog),
    clock: t.clock,
    audioSecret: t.config.audio.secret!,
    publicUrl: t.config.publicUrl,
  });
}

/** The user's call records, decrypted with the calls store's default key. */
export async function callRecords(t: TestApp, user: TestUser): Promise<Array<Record<string, unknown>>> {
  const api = client(t, user);
  const store = (await api.get('/api/root')).json().stores.calls;
  const key = Buffer.from((await api.get(`/api/keys/${store.keyId}`)).json().key, 'hex');
  const objects = (await api.get(`/api/objects/${store.id}/related`)).json() as Array<{
    content: string;
    auth_tag: string;
    iv: string;
    keyId: string;
  }>;
  return objects.map((o) => {
    expect(o.keyId).toBe(store.keyId);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(o.iv, 'hex'));
    decipher.setAuthTag(Buffer.from(o.auth_tag, 'hex'));
    return JSON.parse(
      Buffer.concat([decipher.update(Buffer.from(o.content, 'hex')), decipher.final()]).toString('utf8'),
    );
  });
}
