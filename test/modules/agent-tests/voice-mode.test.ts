// test-files: realtime
// Voice mode of agent tests: a web call of the test's agent at real pace over
// a real socket, the caller's lines spoken by flite at 16 kHz, recognised by
// pocketsphinx, answered by the whole voice agent; the checks read the call's
// record (its transcript with each answer's latency, its tool calls, how it
// ended). Needs flite and pocketsphinx (Debian packages), as the web call
// tests do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OfflineCallerVoice } from '../../../src/providers/call-speech/offline-caller.js';
import { createPocketsphinxSpeechToText } from '../../../src/providers/speech-to-text/pocketsphinx.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, type TestUser } from '../../support/factories.js';
import { freePort } from '../../support/ports.js';
import { callConfig } from '../calls/support.js';
import { WallClock } from '../calls/web-call-support.js';

const canSpeak = OfflineCallerVoice.create() !== null && createPocketsphinxSpeechToText() !== null;

describe.runIf(canSpeak)('agent tests in voice mode', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    const port = await freePort();
    t = await createTestApp({
      clock: new WallClock(),
      env: { PORT: String(port) },
      config: { ...callConfig(), publicUrl: `http://127.0.0.1:${port}` },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    user = await createVerifiedUser(t);
  }, 60_000);
  afterAll(() => t?.close());

  it('speaks the lines into a web call, and checks what its record says: words, tools, outcome, latency', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/agent-tests',
      headers: bearer(user.token),
      payload: {
        name: 'answers and says goodbye, by voice',
        mode: 'voice',
        sideEffects: 'live',
        agent: { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic.' },
        caller: { lines: ['Can you tell me your opening hours please?', 'Goodbye'] },
        expect: {
          says: ['this is Amy', "I don't have information about that"],
          toolCalls: [{ name: 'end_call' }],
          outcome: 'completed',
          // A bound a loaded machine cannot break (a turn took 6 s under CI load): latency targets are the bench's.
          maxLatencyMs: 60_000,
        },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { runId } = (
      await t.app.inject({
        method: 'POST',
        url: `/api/agent-tests/${created.json().id}/runs`,
        headers: bearer(user.token),
      })
    ).json();
    let run = { status: 'queued', results: [] as Array<Record<string, any>> };
    for (let i = 0; i < 1200 && ['queued', 'running'].includes(run.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      run = (await t.app.inject({ url: `/api/agent-tests/runs/${runId}`, headers: bearer(user.token) })).json();
    }
    const result = run.results[0]!;
    expect(
      result.checks.filter((c: { passed: boolean }) => !c.passed),
      JSON.stringify(result.transcript),
    ).toEqual([]);
    expect(result.status).toBe('passed');
    expect(result.checks.find((c: { name: string }) => c.name === 'maxLatencyMs')?.actual).toBeGreaterThan(0);
    // Spoken and recognised: the caller's lines are what pocketsphinx heard, and every answer has its latency.
    const caller = result.transcript.filter((l: { role: string }) => l.role === 'caller');
    expect(caller.map((l: { text: string }) => l.text.toLowerCase()).join(' ')).toMatch(/opening hours[\s\S]*goodbye/);
    const answers = result.transcript.filter(
      (l: { role: string; latencyMs?: number }) => l.role === 'agent' && l.latencyMs,
    );
    expect(answers.length).toBeGreaterThanOrEqual(1);
    // A voice test is a web call of the account: its record is there too.
    const calls = (await t.app.inject({ url: '/api/calls', headers: bearer(user.token) })).json().calls;
    expect(calls.some((c: { direction: string }) => c.direction === 'web')).toBe(true);
  }, 120_000);

  it('refuses a voice test without live side effects or with a goal', async () => {
    for (const extra of [{}, { sideEffects: 'live', caller: { goal: 'book a meeting' } }]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/agent-tests',
        headers: bearer(user.token),
        payload: { name: 'x', mode: 'voice', agent: { name: 'Amy' }, caller: { lines: ['hi'] }, expect: {}, ...extra },
      });
      expect(res.statusCode).toBe(400);
    }
  });
});
