// The sandbox carrier's call control against a local stand-in for our server:
// signed status callbacks in Twilio's order, the media stream opened from the
// TwiML with its token, the caller's lines as real-paced μ-law between its
// waits for the agent, marks echoed, `stop` at the end, a redirect to
// `<Dial>` dialling the number (for at most its time limit, its leg's signed
// duration posted) or to `<Hangup/>` ending the call, and a number ending in
// 0000 never answered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { FRAME_SAMPLES_8K, mulawToPcm, pcmToMulaw } from '../../src/lib/audio.js';
import type { Outbox } from '../../src/providers/outbox.js';
import { SandboxTelephonyProvider } from '../../src/providers/telephony/sandbox.js';
import { VOICEMAIL_GREETING, parseDialTwiml } from '../../src/providers/telephony/sandbox-calls.js';
import { dialTwiml } from '../../src/providers/telephony/twiml.js';
import { twilioSignature } from '../../src/providers/telephony/twilio-signature.js';

const TOKEN = 'sandbox-signing-token';
const outbox = { add: async () => 'id' } as unknown as Outbox;
/** A 400 Hz tone as the caller's "speech": 0.4 s per line. */
const tone = async () =>
  Int16Array.from({ length: 3200 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 400 * i) / 8000)));

interface Stream {
  messages: Array<{
    event: string;
    start?: { callSid: string; customParameters: Record<string, string> };
    media?: { payload: string };
    mark?: { name: string };
  }>;
  socket: WebSocket;
  closed: boolean;
}

let server: Server;
let base: string;
let callbacks: Array<{ path: string; params: Record<string, string>; signed: boolean }>;
/** What the voice webhook answers (TwiML), or a status without TwiML. */
let voiceAnswer: { status: number; twiml: string };
let streams: Stream[];
let provider: SandboxTelephonyProvider;

/** Plays a minimal agent: a greeting, then an answer after each burst of caller speech, each followed by a mark. */
function agent(stream: Stream) {
  const say = (frames: number, mark: string) => {
    const payload = Buffer.from(pcmToMulaw(Int16Array.from({ length: FRAME_SAMPLES_8K }, () => 3000))).toString(
      'base64',
    );
    for (let i = 0; i < frames; i++) stream.socket.send(JSON.stringify({ event: 'media', media: { payload } }));
    stream.socket.send(JSON.stringify({ event: 'mark', mark: { name: mark } }));
  };
  let speaking = false;
  let quietFrames = 0;
  let answers = 0;
  stream.socket.on('message', (raw) => {
    const m = JSON.parse(String(raw));
    stream.messages.push(m);
    if (m.event === 'start') say(10, 'greeting');
    if (m.event !== 'media') return;
    const loud = mulawToPcm(Buffer.from(m.media.payload, 'base64')).some((s) => Math.abs(s) > 1000);
    if (loud) {
      speaking = true;
      quietFrames = 0;
    } else if (speaking && ++quietFrames >= 10) {
      speaking = false;
      say(10, `answer-${++answers}`);
    }
  });
}

beforeEach(async () => {
  callbacks = [];
  streams = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const params = Object.fromEntries(new URLSearchParams(body));
      callbacks.push({
        path: req.url ?? '',
        params,
        signed: req.headers['x-twilio-signature'] === twilioSignature(TOKEN, `${base}${req.url}`, params),
      });
      if (req.url?.startsWith('/api/webhooks/twilio/voice/'))
        res.writeHead(voiceAnswer.status, { 'content-type': 'text/xml' }).end(voiceAnswer.twiml);
      else res.writeHead(204).end();
    });
  });
  const wss = new WebSocketServer({ server, path: '/api/media/twilio' });
  wss.on('connection', (socket) => {
    const stream: Stream = { messages: [], socket, closed: false };
    socket.on('close', () => (stream.closed = true));
    streams.push(stream);
    agent(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  voiceAnswer = { status: 200, twiml: streamTwiml() };
  provider = new SandboxTelephonyProvider(outbox, TOKEN, {
    callbackDelayMs: 10,
    calls: { script: ['one', 'two'], voice: () => ({ speak: tone }), replyPauseMs: 300, replyTimeoutMs: 3000 },
  });
});
afterEach(async () => {
  provider.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const streamTwiml = () =>
  `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${base.replace('http', 'ws')}/api/media/twilio"><Parameter name="token" value="tok&amp;1"/></Stream></Connect></Response>`;
const request = (to = '+14155550123') => ({
  from: '+14155550100',
  to,
  twiml: streamTwiml(),
  statusCallbackUrl: `${base}/api/webhooks/twilio/call/s1`,
});
const loud = (stream: Stream) =>
  stream.messages.filter(
    (m) => m.event === 'media' && mulawToPcm(Buffer.from(m.media!.payload, 'base64')).some((s) => Math.abs(s) > 1000),
  );

describe('the sandbox carrier (call control)', () => {
  it("reads a transfer's <Dial> as the service writes it", () => {
    const url = 'http://127.0.0.1:3000/api/webhooks/twilio/dial/s1?a=1&b=2';
    expect(parseDialTwiml(dialTwiml({ phone: '+14155550199', timeLimitSeconds: 300, statusCallbackUrl: url }))).toEqual(
      { timeLimitSeconds: 300, phone: '+14155550199', statusCallbackUrl: url },
    );
    expect(parseDialTwiml('<Response><Dial>+14155550199</Dial></Response>')).toEqual({
      timeLimitSeconds: 14_400,
      phone: '+14155550199',
      statusCallbackUrl: null,
    });
    expect(parseDialTwiml('<Response><Hangup/></Response>')).toBeNull();
  });

  it('answers a CA sid, posts signed progress, streams the caller lines between the agent answers, echoes marks and hangs up', async () => {
    const { callSid } = await provider.calls.placeCall(request());
    expect(callSid).toMatch(/^CA[0-9a-f]{32}$/);
    await vi.waitFor(
      () =>
        expect(callbacks.map((c) => c.params.CallStatus)).toEqual(['initiated', 'ringing', 'in-progress', 'completed']),
      { timeout: 20_000, interval: 50 },
    );
    expect(
      callbacks.every(
        (c) =>
          c.signed &&
          c.params.CallSid === callSid &&
          c.params.To === '+14155550123' &&
          c.params.From === '+14155550100',
      ),
    ).toBe(true);
    expect(Number(callbacks[3]!.params.CallDuration)).toBeGreaterThanOrEqual(1);

    const [stream] = streams;
    expect(stream!.messages[0]).toMatchObject({ event: 'connected' });
    expect(stream!.messages[1]).toMatchObject({
      event: 'start',
      start: { callSid, customParameters: { token: 'tok&1' } },
    });
    // Each mark comes back; the caller spoke two lines (two bursts of tone), then stop and close.
    const marks = stream!.messages.filter((m) => m.event === 'mark').map((m) => m.mark!.name);
    expect(marks).toEqual(['greeting', 'answer-1', 'answer-2']);
    const loud = stream!.messages.filter(
      (m) => m.event === 'media' && mulawToPcm(Buffer.from(m.media!.payload, 'base64')).some((s) => Math.abs(s) > 1000),
    );
    expect(loud.length).toBe(2 * 20);
    // Real pace: one frame per 20 ms, silence included.
    expect(stream!.messages.at(-1)).toMatchObject({ event: 'stop' });
    // The close reaches this server side a moment after the completed callback may have: wait for it.
    await vi.waitFor(() => expect(stream!.closed).toBe(true), { timeout: 5000, interval: 20 });
    expect(provider.calls.running).toBe(0);
  }, 30_000);

  it('after its process stalled, catches up at most a second of its stream (a jitter buffer), not the whole lag at once (an audio flood)', async () => {
    const talkative = new SandboxTelephonyProvider(outbox, TOKEN, {
      callbackDelayMs: 10,
      calls: { script: Array(8).fill('line'), voice: () => ({ speak: tone }), replyPauseMs: 300, replyTimeoutMs: 3000 },
    });
    try {
      await talkative.calls.placeCall(request());
      await vi.waitFor(() => expect(streams[0]?.messages.some((m) => m.event === 'media')).toBe(true), {
        timeout: 10_000,
        interval: 10,
      });
      const media = () => streams[0]!.messages.filter((m) => m.event === 'media').length;
      // This whole process (the carrier and the stand-in server alike) stops for 3 s, as on an overloaded machine.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
      const before = media();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const sent = media() - before;
      // Half a second after the stall: the second caught up and the half second itself (75 frames), not 3.5 s (175).
      expect(sent).toBeLessThanOrEqual(85);
      expect(sent).toBeGreaterThanOrEqual(25);
      expect(streams[0]!.closed).toBe(false);
    } finally {
      talkative.stop();
    }
  }, 30_000);

  it("a redirect to <Dial> stops the stream, dials the number for at most its time limit and posts the dialled leg's signed duration, then the call's; a hang-up ends the call; a number ending in 0000 is not answered", async () => {
    const { callSid } = await provider.calls.placeCall(request());
    await vi.waitFor(() => expect(streams[0]?.messages.some((m) => m.event === 'start')).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    expect(provider.calls.caller(callSid)?.lines).toEqual(['one', 'two']);
    // The person would talk 4 s (transferLegMs); the time limit of 1 s cuts the leg.
    const legCallback = `${base}/api/webhooks/twilio/dial/s1`;
    await provider.calls.redirectCall(
      callSid,
      dialTwiml({ phone: '+14155550199', timeLimitSeconds: 1, statusCallbackUrl: legCallback }),
    );
    await vi.waitFor(() => expect(streams[0]!.closed).toBe(true), { timeout: 5000, interval: 20 });
    expect(streams[0]!.messages.at(-1)).toMatchObject({ event: 'stop' });
    await vi.waitFor(
      () =>
        expect(callbacks.map((c) => c.params.CallStatus)).toEqual([
          'initiated',
          'ringing',
          'in-progress',
          'completed',
          'completed',
        ]),
      { timeout: 5000, interval: 20 },
    );
    const leg = callbacks[3]!;
    expect(leg).toMatchObject({
      path: '/api/webhooks/twilio/dial/s1',
      signed: true,
      params: {
        ParentCallSid: callSid,
        CallStatus: 'completed',
        CallDuration: '1',
        To: '+14155550199',
        Direction: 'outbound-dial',
      },
    });
    expect(leg.params.CallSid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(leg.params.CallSid).not.toBe(callSid);
    // The call ends with its leg (nothing follows the <Dial>): its own completed counts the whole call.
    expect(callbacks[4]).toMatchObject({
      path: '/api/webhooks/twilio/call/s1',
      params: { CallSid: callSid, CallStatus: 'completed' },
    });
    await provider.calls.hangUpCall(callSid); // already ended: nothing more
    expect(provider.calls.caller(callSid)).toBeNull();

    callbacks.length = 0;
    const hungUp = await provider.calls.placeCall(request());
    await vi.waitFor(() => expect(streams[1]?.messages.some((m) => m.event === 'start')).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    await provider.calls.redirectCall(hungUp.callSid, '<Response><Hangup/></Response>');
    await vi.waitFor(
      () =>
        expect(callbacks.map((c) => c.params.CallStatus)).toEqual(['initiated', 'ringing', 'in-progress', 'completed']),
      { timeout: 5000, interval: 20 },
    );
    expect(streams[1]!.messages.at(-1)).toMatchObject({ event: 'stop' });

    callbacks.length = 0;
    const unanswered = await provider.calls.placeCall(request('+14155550000'));
    await vi.waitFor(
      () => expect(callbacks.map((c) => c.params.CallStatus)).toEqual(['initiated', 'ringing', 'no-answer']),
      { timeout: 5000, interval: 20 },
    );
    expect(callbacks.every((c) => c.signed && c.params.CallSid === unanswered.callSid)).toBe(true);
    expect(streams).toHaveLength(2);
  }, 30_000);

  it('with asynchronous AMD: a caller who speaks is `human`; the voicemail script plays a greeting and a beep, then sends machine_end_beep, signed, and records until the agent hangs up', async () => {
    const amd = `${base}/api/webhooks/twilio/amd/s1`;
    const person = await provider.calls.placeCall({ ...request(), machineDetectionUrl: amd });
    await vi.waitFor(
      () =>
        expect(callbacks.map((c) => c.params.CallStatus ?? c.params.AnsweredBy)).toEqual([
          'initiated',
          'ringing',
          'in-progress',
          'human',
          'completed',
        ]),
      { timeout: 20_000, interval: 50 },
    );
    expect(callbacks[3]).toMatchObject({
      path: '/api/webhooks/twilio/amd/s1',
      signed: true,
      params: { CallSid: person.callSid, AnsweredBy: 'human' },
    });

    callbacks.length = 0;
    const machine = await provider.calls.placeCall({ ...request(), machineDetectionUrl: amd, script: 'voicemail' });
    await vi.waitFor(() => expect(callbacks.some((c) => c.params.AnsweredBy === 'machine_end_beep')).toBe(true), {
      timeout: 20_000,
      interval: 50,
    });
    const verdict = callbacks.find((c) => c.params.AnsweredBy)!;
    expect(verdict).toMatchObject({
      path: '/api/webhooks/twilio/amd/s1',
      signed: true,
      params: { CallSid: machine.callSid, AccountSid: 'ACsandbox' },
    });
    expect(Number(verdict.params.MachineDetectionDuration)).toBeGreaterThan(900);
    expect(provider.calls.caller(machine.callSid)?.spoken()).toEqual([VOICEMAIL_GREETING]);
    const stream = streams.at(-1)!;
    // The greeting (0.4 s of tone here) then the beep (0.5 s), before the verdict.
    expect(loud(stream).length).toBe(20 + 25);
    // The machine keeps recording until the agent hangs up.
    expect(stream.closed).toBe(false);
    await provider.calls.redirectCall(machine.callSid, '<Response><Hangup/></Response>');
    await vi.waitFor(() => expect(callbacks.at(-1)!.params.CallStatus).toBe('completed'), {
      timeout: 5000,
      interval: 20,
    });
  }, 40_000);

  it('rings one of our numbers as Twilio does: the signed voice webhook (Direction inbound), then the stream of its TwiML, where the caller talks; no status callbacks', async () => {
    const voiceUrl = `${base}/api/webhooks/twilio/voice/n1`;
    const { callSid, answered } = await provider.calls.ring({
      from: '+14155550177',
      to: '+14155550100',
      voiceUrl,
      script: ['one'],
    });
    expect(answered).toBe(true);
    expect(callSid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(callbacks[0]).toMatchObject({
      path: '/api/webhooks/twilio/voice/n1',
      signed: true,
      params: {
        CallSid: callSid,
        CallStatus: 'ringing',
        Direction: 'inbound',
        From: '+14155550177',
        To: '+14155550100',
        AccountSid: 'ACsandbox',
      },
    });
    await vi.waitFor(() => expect(streams[0]?.closed).toBe(true), { timeout: 20_000, interval: 50 });
    const [stream] = streams;
    expect(stream!.messages[1]).toMatchObject({
      event: 'start',
      start: { callSid, customParameters: { token: 'tok&1' } },
    });
    expect(loud(stream!).length).toBe(20);
    expect(stream!.messages.at(-1)).toMatchObject({ event: 'stop' });
    expect(callbacks).toHaveLength(1);
    expect(provider.calls.running).toBe(0);
  }, 30_000);

  it('a refusal is heard and hung up; a webhook that is not reached or refuses ends the call unanswered', async () => {
    const voiceUrl = `${base}/api/webhooks/twilio/voice/n2`;
    voiceAnswer = {
      status: 200,
      twiml:
        '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Sorry, this number is not taking calls right now. Goodbye.</Say><Hangup/></Response>',
    };
    const refused = await provider.calls.ring({ from: '+14155550177', to: '+14155550100', voiceUrl });
    expect(refused.answered).toBe(true);
    // Heard before the call ends (the caller is gone from the carrier once it has).
    await vi.waitFor(() => expect(provider.calls.running).toBe(0), { timeout: 5000, interval: 20 });
    expect(streams).toHaveLength(0);

    voiceAnswer = { status: 400, twiml: '{"code":"invalid_signature"}' };
    expect((await provider.calls.ring({ from: '+14155550177', to: '+14155550100', voiceUrl })).answered).toBe(false);
    const nowhere = await provider.calls.ring({
      from: '+14155550177',
      to: '+14155550100',
      voiceUrl: 'http://127.0.0.1:1/api/webhooks/twilio/voice/n3',
    });
    expect(nowhere.answered).toBe(false);
    expect(provider.calls.running).toBe(0);
    expect(streams).toHaveLength(0);
  }, 30_000);
});
