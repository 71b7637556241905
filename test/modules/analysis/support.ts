// Helpers of the analysis tests: a user's records of any store decrypted with
// the store's default key (as the SDK opens them), an ended call written
// through the calls service's in-process report (the voice agent's path),
// and waiting for a call's analysis.
import { createDecipheriv } from 'node:crypto';
import { expect } from 'vitest';
import type { AssembledCall, CallOutcome } from '../../../src/providers/audio/interface.js';
import type { TestApp } from '../../support/app.js';
import type { TestUser } from '../../support/factories.js';
import { client } from '../data/support.js';
import { eventually } from '../events/support.js';

export async function storeRecords(t: TestApp, user: TestUser, store: string): Promise<Array<Record<string, unknown>>> {
  const api = client(t, user);
  const container = (await api.get('/api/root')).json().stores[store];
  const key = Buffer.from((await api.get(`/api/keys/${container.keyId}`)).json().key, 'hex');
  const objects = (await api.get(`/api/objects/${container.id}/related`)).json() as Array<{
    content: string;
    auth_tag: string;
    iv: string;
    keyId: string;
  }>;
  return objects.map((o) => {
    expect(o.keyId).toBe(container.keyId);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(o.iv, 'hex'));
    decipher.setAuthTag(Buffer.from(o.auth_tag, 'hex'));
    return JSON.parse(
      Buffer.concat([decipher.update(Buffer.from(o.content, 'hex')), decipher.final()]).toString('utf8'),
    );
  });
}

export interface EndedCall {
  agent?: AssembledCall['agent'];
  transcript: Array<Record<string, unknown>>;
  toolCalls?: Array<Record<string, unknown>>;
  outcome?: CallOutcome;
  status?: 'completed' | 'failed';
  durationSeconds?: number;
  fields?: Record<string, unknown>;
  webhookUrl?: string;
}

/** A web call (never charged) that ends at once with this record, as the voice agent reports it → its session id. */
export async function endedCall(t: TestApp, user: TestUser, call: EndedCall): Promise<string> {
  const calls = t.services.calls.calls;
  const { sessionId } = await calls.openWeb(user.id, {
    to: '',
    from: null,
    agent: call.agent ?? { name: 'Amy' },
    contact: { name: 'Grace' },
    systemPrompt: 'You are Amy.',
    firstMessage: 'Hello, this is Amy.',
    voice: { provider: 'local', voiceId: 'en-us' },
    tools: [],
  });
  if (call.webhookUrl) {
    await t.services.webhooks.webhooks.ensureSecret(user.id);
    await t.database.db
      .updateTable('call_sessions')
      .set({ webhook_url: call.webhookUrl })
      .where('id', '=', sessionId)
      .execute();
  }
  const outcome = call.outcome ?? 'completed';
  await calls.report(
    sessionId,
    `end_${sessionId}`,
    {
      status: call.status ?? 'completed',
      at: new Date(t.clock.now()).toISOString(),
      duration_seconds: call.durationSeconds ?? 30,
      outcome,
    },
    {
      fields: {
        direction: 'web',
        outcome,
        transcript: call.transcript,
        toolCalls: call.toolCalls ?? [],
        ...call.fields,
      },
    },
  );
  return sessionId;
}

/** GET /api/calls/{id} once its analysis state is set (completed, failed or skipped). */
export async function analysedCall(t: TestApp, user: TestUser, sessionId: string, timeoutMs = 10_000) {
  await eventually(
    async () =>
      Boolean(
        (
          await t.database.db
            .selectFrom('call_sessions')
            .select('analysis_status')
            .where('id', '=', sessionId)
            .executeTakeFirst()
        )?.analysis_status,
      ),
    timeoutMs,
    `the analysis of ${sessionId}`,
  );
  const res = await client(t, user).get(`/api/calls/${sessionId}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
