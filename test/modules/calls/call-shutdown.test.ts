// A graceful stop (SIGTERM: the app closes) during a call ends it `failed`
// with outcome `instance_stopped`, and its record (timed transcript, tool
// calls, recording) is written before the database closes (issue 46: it was
// lost, "driver has already been destroyed"). The recording here is longer
// than the largest object: it is kept whole, in parts, and served joined.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, createFundedUser } from '../../support/factories.js';
import { freePort } from '../../support/ports.js';
import { parseWav } from '../../support/wav.js';
import { callConfig } from './support.js';
import { BrowserCall, WallClock, startWebCall } from './web-call-support.js';

/** Small objects: a few seconds of two-channel 8 kHz audio need several. */
const OBJECT_LIMIT = 48 * 1024;

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  const port = await freePort();
  t = await createTestApp({
    clock: new WallClock(),
    config: { ...callConfig(), publicUrl: `http://127.0.0.1:${port}`, objectContentLimitBytes: OBJECT_LIMIT },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  user = await createFundedUser(t);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('a call under way when the instance stops', () => {
  it('ends instance_stopped with its whole record, recording included, before the database closes', async () => {
    const started = await startWebCall(t, user, {
      agent: { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic. How can I help you today?' },
    });
    expect(started.statusCode, started.body).toBe(201);
    const { sessionId, url } = started.json();
    const browser = new BrowserCall(url);
    await browser.opened;
    await browser.waitFor(
      () => browser.lines('agent').length > 0 && browser.agentBytes > 16_000 * 2,
      'the greeting is being heard',
    );
    // Three seconds of (quiet) caller audio, at real pace.
    await browser.speak(
      new Int16Array(16_000 * 3).map((_, i) => Math.round(Math.sin(i / 7) * 40)),
      0,
    );
    const closedAt = Date.now();
    await t.app.close();
    const ended = await browser.closed;
    expect(ended.code).toBe(1000);

    // The database is still open: the app closed first, as main.ts does on SIGTERM.
    const row = await t.database.db
      .selectFrom('call_sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'failed', outcome: 'instance_stopped', reason: 'instance_stopped' });
    expect(row.record_object_id).not.toBeNull();
    expect(row.finished_at).not.toBeNull();
    const record = JSON.parse(
      (await t.services.data.records.read(user.id, 'calls', row.record_object_id!)).toString('utf8'),
    );
    expect(record.outcome).toBe('instance_stopped');
    expect(record.transcript[0]).toMatchObject({
      role: 'agent',
      text: expect.stringContaining('Amy'),
      startMs: expect.any(Number),
    });
    expect(record.toolCalls).toEqual([]);
    expect(record.recordingParts).toBeGreaterThan(1);

    const wav = await t.services.calls.views.recording(user.id, sessionId);
    expect(wav.length).toBeGreaterThan(OBJECT_LIMIT * 2);
    const decoded = parseWav(wav);
    expect(decoded).toMatchObject({ sampleRate: 8000, channels: 2, bitsPerSample: 16 });
    // Every second of the call: no part was dropped (the call lasted at least the greeting and the caller's 3 s).
    const seconds = decoded.durationSeconds;
    expect(seconds).toBeGreaterThan(3);
    expect(seconds).toBeLessThan((Date.now() - closedAt) / 1000 + 60);
  }, 60_000);
});
