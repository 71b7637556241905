// Playing Twilio for the built-in voice agent's end-to-end tests: a number
// the user owns at the Twilio fake, the stream a placed call's TwiML names,
// and a call that connects to it as Twilio does (connected, start with the
// token, μ-law media at real pace, marks echoed once played, keys pressed).
import { randomUUID } from 'node:crypto';
import { expect, vi } from 'vitest';
import WebSocket from 'ws';
import { FRAME_SAMPLES_8K, mulawToPcm, pcmToMulaw } from '../../src/lib/audio.js';
import type { TestApp } from './app.js';
import { insertPhoneNumber } from './phone-numbers.js';
import type { TestUser } from './factories.js';
import type { TwilioFake } from './twilio-fake.js';

/** A Twilio number of `user`'s, known to the fake too (attaching it points its voice URL at us). */
export async function twilioNumber(
  t: TestApp,
  twilio: TwilioFake,
  user: TestUser,
  phone = '+14155550100',
): Promise<string> {
  const sid = `PN${randomUUID().replace(/-/g, '').slice(0, 32)}`;
  twilio.incoming.set(sid, { sid, phoneNumber: phone, friendlyName: phone, addressSid: null, voiceUrl: '' });
  return (await insertPhoneNumber(t, user.id, { provider: 'twilio', phone, sid })).id;
}

/** The stream URL and token of a call's `<Connect><Stream>` TwiML. */
export function streamOf(twiml: string): { url: string; token: string } {
  const stream = /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(twiml);
  expect(stream, twiml).not.toBeNull();
  return { url: stream![1]!, token: stream![2]! };
}

/** What Twilio does with the TwiML of a call: connects to its stream with its parameters, speaks μ-law, echoes marks once played. */
export class FakeTwilioCall {
  readonly ws: WebSocket;
  readonly received: Array<{ event: string; mark?: { name: string }; media?: { payload: string } }> = [];
  agentFrames = 0;
  private seq = 1;
  readonly streamSid = `MZ${randomUUID().replace(/-/g, '')}`;

  constructor(
    url: string,
    private readonly token: string,
    readonly callSid: string,
    private readonly accountSid: string,
  ) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as {
        event: string;
        media?: { payload: string };
        mark?: { name: string };
      };
      this.received.push(message);
      if (message.event === 'media') this.agentFrames++;
      // Twilio echoes a mark once the audio before it has played; the agent's audio arrives paced, so at once is close.
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
        accountSid: this.accountSid,
        callSid: this.callSid,
        tracks: ['inbound'],
        customParameters: { token: this.token },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
  }

  send(message: Record<string, unknown>) {
    this.ws.send(JSON.stringify({ ...message, sequenceNumber: String(this.seq++) }));
  }

  /** Streams PCM16 8 kHz as 20 ms μ-law media messages at real pace, then `silenceMs` of silence. */
  async speak(pcm: Int16Array, silenceMs = 1200): Promise<void> {
    const total = new Int16Array(pcm.length + (silenceMs / 20) * FRAME_SAMPLES_8K);
    total.set(pcm);
    const started = Date.now();
    for (let i = 0, chunk = 1; i + FRAME_SAMPLES_8K <= total.length; i += FRAME_SAMPLES_8K, chunk++) {
      const payload = Buffer.from(pcmToMulaw(total.subarray(i, i + FRAME_SAMPLES_8K))).toString('base64');
      this.send({
        event: 'media',
        streamSid: this.streamSid,
        media: { track: 'inbound', chunk: String(chunk), timestamp: String(chunk * 20), payload },
      });
      const due = started + chunk * 20;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
    }
  }

  /** The caller presses a key (Twilio's `dtmf` message). */
  press(digit: string) {
    this.send({ event: 'dtmf', streamSid: this.streamSid, dtmf: { track: 'inbound_track', digit } });
  }

  /** Twilio's end of the stream. */
  stop() {
    this.send({
      event: 'stop',
      streamSid: this.streamSid,
      stop: { accountSid: this.accountSid, callSid: this.callSid },
    });
  }

  events(name: string) {
    return this.received.filter((m) => m.event === name);
  }

  /** The agent's audio so far, PCM16 8 kHz. */
  agentAudio(): Int16Array[] {
    return this.events('media').map((m) => mulawToPcm(Buffer.from(m.media!.payload, 'base64')));
  }
}

/** Waits until the agent has sent no audio for 600 ms (it finished speaking). */
export async function quiet(call: FakeTwilioCall, timeout = 30_000): Promise<void> {
  let last = -1;
  let since = Date.now();
  await vi.waitFor(
    () => {
      if (call.agentFrames !== last) {
        last = call.agentFrames;
        since = Date.now();
      }
      expect(Date.now() - since).toBeGreaterThan(600);
    },
    { timeout, interval: 50 },
  );
}
