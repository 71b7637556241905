// What the OpenAI-compatible recogniser (a self-hoster's Whisper) is sent on a
// real call (issue 44 "Hearing"): the test plays Twilio, a frame every 20 ms
// for the whole call as Twilio sends them (silence while the agent talks), and
// the OpenAI fake records each transcription request. Each request's WAV
// holds the caller's line with a short pre-roll and post-roll, on the greeting
// turn (the caller speaks after a long greeting) and on a later turn: never
// the greeting, the agent's answer or the silence between.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { FRAME_SAMPLES_8K, mulawToPcm, pcmToMulaw } from '../../../src/lib/audio.js';
import { OfflineCallerVoice } from '../../../src/providers/call-speech/offline-caller.js';
import { POST_ROLL_MS, PRE_ROLL_MS } from '../../../src/providers/speech-to-text/utterance-window.js';
import type { TestApp } from '../../support/app.js';
import { bearer, createFundedUser } from '../../support/factories.js';
import { type OpenAiFake, startOpenAiFake, textAnswer } from '../../support/openai-fake.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';
import { type TwilioFake, startTwilioFake } from '../../support/twilio-fake.js';
import { twilioNumber } from '../../support/twilio-media.js';
import { frameRms, speechSpanMs } from '../../support/voice-audio.js';
import { twilioVoiceApp } from './voice-app.js';

const voice = OfflineCallerVoice.create();
/** How far the VAD's speech may reach past the loud part of a line (a soft onset or tail it still scores as speech). */
const VAD_SLACK_MS = 200;

let t: TestApp;
let twilio: TwilioFake;
let openai: OpenAiFake;

beforeAll(async () => {
  [twilio, openai] = await Promise.all([startTwilioFake(), startOpenAiFake()]);
  ({ t } = await twilioVoiceApp({ twilio, openai }));
}, 60_000);
afterAll(async () => {
  await t?.close();
  await Promise.all([twilio?.close(), openai?.close()]);
});

/** Twilio carrying the call: a μ-law frame every 20 ms from the moment it starts (the caller's line when it speaks, else silence), marks echoed. */
class ContinuousTwilioCall {
  readonly ws: WebSocket;
  agentFrames = 0;
  lastAgentFrameAt = 0;
  private seq = 1;
  private chunk = 0;
  private queue: Int16Array[] = [];
  private whenSpoken: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  readonly streamSid = `MZ${randomUUID().replace(/-/g, '')}`;

  constructor(
    url: string,
    private readonly token: string,
    readonly callSid: string,
  ) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { event: string; mark?: { name: string } };
      if (message.event === 'media') {
        this.agentFrames++;
        this.lastAgentFrameAt = Date.now();
      }
      if (message.event === 'mark') this.send({ event: 'mark', streamSid: this.streamSid, mark: message.mark });
    });
  }

  async open(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send({
      event: 'start',
      streamSid: this.streamSid,
      start: {
        streamSid: this.streamSid,
        accountSid: twilio.accountSid,
        callSid: this.callSid,
        tracks: ['inbound'],
        customParameters: { token: this.token },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
    const started = Date.now();
    const tick = () => {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      this.chunk++;
      const frame = this.queue.shift() ?? new Int16Array(FRAME_SAMPLES_8K);
      if (this.queue.length === 0) this.whenSpoken?.();
      this.send({
        event: 'media',
        streamSid: this.streamSid,
        media: {
          track: 'inbound',
          chunk: String(this.chunk),
          timestamp: String(this.chunk * 20),
          payload: Buffer.from(pcmToMulaw(frame)).toString('base64'),
        },
      });
      this.timer = setTimeout(tick, Math.max(0, started + (this.chunk + 1) * 20 - Date.now()));
    };
    tick();
  }

  /** The caller's line, frame by frame in place of silence; resolves once it has been sent. */
  say(pcm: Int16Array): Promise<void> {
    for (let i = 0; i + FRAME_SAMPLES_8K <= pcm.length; i += FRAME_SAMPLES_8K)
      this.queue.push(pcm.subarray(i, i + FRAME_SAMPLES_8K));
    return new Promise((resolve) => (this.whenSpoken = resolve));
  }

  send(message: Record<string, unknown>) {
    this.ws.send(JSON.stringify({ ...message, sequenceNumber: String(this.seq++) }));
  }

  stop() {
    if (this.timer) clearTimeout(this.timer);
    this.send({
      event: 'stop',
      streamSid: this.streamSid,
      stop: { accountSid: twilio.accountSid, callSid: this.callSid },
    });
  }
}

/** Frames louder than -30 dBFS: the body of the speech, which an utterance must hold. */
const loudFrames = (pcm: Int16Array, rate: number) => frameRms(pcm, rate).filter((r) => r > 1000).length;

/** Waits until the agent has sent no audio for 800 ms. */
async function agentQuiet(call: ContinuousTwilioCall) {
  await vi.waitFor(() => expect(call.agentFrames > 0 && Date.now() - call.lastAgentFrameAt > 800).toBe(true), {
    timeout: 30_000,
    interval: 50,
  });
}

describe.skipIf(!voice)('the OpenAI-compatible recogniser on a call played as Twilio', () => {
  it('is sent each caller line with its pre-roll and post-roll, on the greeting turn and on a later one: not the greeting, the answer or the silence', async () => {
    const user = await createFundedUser(t);
    const server = await registerServer(t, user);
    const numberId = await twilioNumber(t, twilio, user);
    const greeting =
      'Hello Grace, this is Amy from the clinic. I am calling about the new opening hours of the clinic, which change from next month, and about your appointment.';
    openai.transcripts.push('What are your opening hours?', 'Do you have parking for visitors?');
    openai.chatScripts.push(
      { events: textAnswer('We are open Monday to Friday from nine to five, and on Saturday morning.') },
      { events: textAnswer('Goodbye!') },
    );
    const jwt = await signPayload(server, {
      agent: { name: 'Amy', personaId: 'local-amy', firstMessage: greeting },
      contact: { name: 'Grace', phone: '+14155550123' },
      type: 'prompt',
      prompt: 'Answer questions about the clinic.',
      phoneNumberId: numberId,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/session/call',
      headers: bearer(user.token),
      payload: { server: server.name, jwt },
    });
    expect(res.statusCode, res.body).toBe(204);
    const placed = twilio.calls.at(-1)!;
    const stream = /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(placed.twiml)!;
    const [question, parking] = await Promise.all(
      ['What are your opening hours?', 'Do you have parking for visitors?'].map(async (line) =>
        mulawToPcm(pcmToMulaw(await voice!.speak(line, AbortSignal.timeout(15_000)))),
      ),
    );

    const call = new ContinuousTwilioCall(stream[1]!, stream[2]!, placed.sid);
    /** Transcription requests made by the end of each caller turn (the VAD may cut a line in two). */
    const turns: number[] = [];
    await call.open();
    try {
      // The long greeting plays to its end while the caller is silent; then a second more of silence.
      await vi.waitFor(() => expect(call.agentFrames).toBeGreaterThan(150), { timeout: 30_000, interval: 50 });
      await agentQuiet(call);
      expect(openai.transcriptions).toHaveLength(0);
      await call.say(question!);
      await vi.waitFor(() => expect(openai.chats).toHaveLength(1), { timeout: 20_000, interval: 50 });
      turns.push(openai.transcriptions.length);
      await agentQuiet(call);
      await call.say(parking!);
      await vi.waitFor(() => expect(openai.chats).toHaveLength(2), { timeout: 20_000, interval: 50 });
      turns.push(openai.transcriptions.length);
    } finally {
      call.stop();
    }

    for (const [i, line] of [question!, parking!].entries()) {
      const requests = openai.transcriptions.slice(i === 0 ? 0 : turns[0], turns[i]).map((r) => r.wav!);
      expect(requests.length).toBeGreaterThan(0);
      const sentMs = requests.reduce((ms, wav) => ms + (wav.samples.length * 1000) / wav.sampleRate, 0);
      const speechMs = speechSpanMs(line, 8000);
      console.log(
        `turn ${i + 1}: ${requests.length} request(s), ${Math.round(sentMs)} ms sent for ${speechMs} ms of speech (${(sentMs / speechMs).toFixed(2)}×)`,
      );
      // They hold the whole line…
      expect(requests.reduce((n, wav) => n + loudFrames(wav.samples, wav.sampleRate), 0)).toBeGreaterThanOrEqual(
        loudFrames(line, 8000) - 1,
      );
      // …and little else: each utterance's pre-roll and post-roll, and what the VAD counts as speech around the loud part.
      expect(sentMs).toBeLessThanOrEqual(speechMs + requests.length * (PRE_ROLL_MS + POST_ROLL_MS) + VAD_SLACK_MS);
    }
  }, 120_000);
});
