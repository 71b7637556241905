// Calls for console tests, written as the voice agent leaves them: a call
// session row, its encrypted record in the owner's `calls` store (transcript
// with latency, tool calls) and the two-channel recording as the record's
// child; a settled charge when it was paid.
import { encodeWav } from '../../../src/lib/audio.js';
import { newId } from '../../../src/lib/ids.js';
import type { TestApp } from '../../support/app.js';
import type { TestUser } from '../../support/factories.js';
import { WallClock } from '../../support/wall-clock.js';

export const seededTranscript = [
  { role: 'agent', text: 'Hello, this is Amy from the clinic.', startMs: 120, endMs: 2300 },
  { role: 'caller', text: 'Can you tell me your opening hours please?', startMs: 2900, endMs: 5100 },
  {
    role: 'agent',
    text: 'We are open Monday to Friday from nine to five.',
    startMs: 5900,
    endMs: 8200,
    latency: { sttMs: 310, llmFirstTokenMs: 420, ttsFirstByteMs: 150, overheadMs: 12, totalMs: 892 },
  },
  { role: 'caller', text: 'Thank you, goodbye.', startMs: 9000, endMs: 10100, recognised: false },
  {
    role: 'agent',
    text: 'Goodbye!',
    startMs: 10900,
    endMs: 11500,
    interrupted: true,
    latency: { sttMs: 280, llmFirstTokenMs: 390, ttsFirstByteMs: 140, overheadMs: 9, totalMs: 819 },
  },
];

export const seededToolCalls = [
  {
    name: 'search_knowledge',
    arguments: { query: 'opening hours' },
    result: { matches: [{ text: 'Opening hours: we are open Monday to Friday from nine to five.' }] },
    atMs: 5300,
  },
];

/** A two-channel 8 kHz WAV of `seconds`: a tone on the caller's channel, another on the agent's. */
export function stereoWav(seconds = 2): Buffer {
  const frames = 8000 * seconds;
  const samples = new Int16Array(frames * 2);
  for (let i = 0; i < frames; i++) {
    samples[i * 2] = Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
    samples[i * 2 + 1] = Math.round(6000 * Math.sin((2 * Math.PI * 660 * i) / 8000));
  }
  return encodeWav(samples, 8000, 2);
}

export interface SeededCall {
  direction?: 'outbound' | 'inbound' | 'web';
  status?: string;
  from?: string;
  to?: string;
  durationSeconds?: number;
  transcript?: unknown[];
  toolCalls?: unknown[];
  /** The record's `pathway` (DESIGN.md "Conversational pathways", Record): `{ id?, name, path, variables }`. */
  pathway?: unknown;
  recording?: Buffer;
  chargedCents?: number;
  startedAt?: number;
}

export async function seedCall(t: TestApp, user: TestUser, call: SeededCall = {}): Promise<string> {
  const now = call.startedAt ?? Date.now();
  const id = newId(now);
  const status = call.status ?? 'completed';
  const direction = call.direction ?? 'outbound';
  let recordId: string | null = null;
  if (call.transcript) {
    const record = {
      session_id: id,
      status,
      transcript: call.transcript,
      toolCalls: call.toolCalls ?? [],
      ...(call.pathway ? { pathway: call.pathway } : {}),
    };
    recordId = (await t.services.data.records.create(user.id, 'calls', Buffer.from(JSON.stringify(record), 'utf8'))).id;
    if (call.recording) await t.services.data.records.create(user.id, 'calls', call.recording, recordId);
  }
  await t.database.db
    .insertInto('call_sessions')
    .values({
      id,
      user_id: user.id,
      direction,
      status,
      webhook_url: null,
      summary: JSON.stringify({ to: call.to, from: call.from, agent: { name: 'Amy' } }),
      provider_call_id: null,
      duration_seconds: call.durationSeconds ?? 11,
      finished_at: now + 12_000,
      record_object_id: recordId,
      answered_at: now + 500,
      outcome: status === 'completed' ? 'completed' : null,
      created_at: now,
      updated_at: now + 12_000,
    })
    .execute();
  if (call.chargedCents !== undefined) {
    await t.database.db
      .insertInto('call_charges')
      .values({
        ref: id,
        user_id: user.id,
        direction,
        country: 'US',
        rate: 200,
        max_seconds: 600,
        allowance_seconds: 0,
        allowance_call: 0,
        hold_cents: 20,
        state: 'settled',
        seconds: call.durationSeconds ?? 11,
        charged_cents: call.chargedCents,
        created_at: now,
        settled_at: now + 12_000,
      })
      .execute();
  }
  return id;
}

export { WallClock };
