// What a per-utterance recogniser hears from a live call (issue 44 "Hearing"):
// a whole call on a ManualClock with a fake Twilio socket sending a frame every
// 20 ms (silence while the agent talks, as Twilio does), the energy VAD, and
// the real OpenAI-compatible stream whose request is recorded instead of sent.
// Each utterance sent is the caller's speech plus the pre-roll and the
// post-roll: never the greeting, the agent's answers, or the silence between.
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { ProviderFailure } from '../../../src/providers/failure.js';
import { OpenAiSpeechToText } from '../../../src/providers/speech-to-text/openai.js';
import { POST_ROLL_MS, PRE_ROLL_MS } from '../../../src/providers/speech-to-text/utterance-window.js';
import { VoiceSession } from '../../../src/modules/voice/session.js';
import { type Transport, TwilioTransport, WebTransport } from '../../../src/modules/voice/transport.js';
import { EnergyVad } from '../../../src/modules/voice/vad.js';
import { FakeSocket, flush, ScriptedModel, silence, text, tone, ToneSpeech } from './fakes.js';

/** The OpenAI-compatible recogniser with its request replaced: what each utterance sent holds, and a scripted answer. */
class RecordedWhisper extends OpenAiSpeechToText {
  sent: Int16Array[] = [];
  rates: number[] = [];
  answers: Array<string | Error> = [];
  constructor() {
    super({ url: 'http://127.0.0.1:9/v1', apiKey: null, model: 'whisper-1' });
  }
  override async transcribe(pcm: Int16Array, _signal: AbortSignal, sampleRate: 8000 | 16000 = 8000): Promise<string> {
    this.sent.push(pcm);
    this.rates.push(sampleRate);
    const answer = this.answers.shift() ?? '';
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

const msOf = (pcm: Int16Array) => (pcm.length * 1000) / 8000;
/** ms of the utterance that are the caller's tone (loud samples), not the pre-roll's or post-roll's silence. */
const speechMsIn = (pcm: Int16Array) => {
  let first = -1;
  let last = -1;
  for (let i = 0; i < pcm.length; i++) if (Math.abs(pcm[i]!) > 1000) first < 0 ? (first = i) : 0, (last = i);
  return first < 0 ? 0 : Math.round(((last - first + 1) * 1000) / 8000);
};

async function startCall(firstMessage: string, model: ScriptedModel, web = false) {
  const clock = new ManualClock(0);
  const socket = new FakeSocket();
  socket.autoEcho = clock;
  let transport: Transport;
  if (web) transport = new WebTransport(socket, undefined, { clock });
  else {
    const twilio = new TwilioTransport(socket, { clock });
    socket.start();
    await twilio.started;
    transport = twilio;
  }
  const stt = new RecordedWhisper();
  const speech = new ToneSpeech('espeak-ng', clock);
  const recognitionTimes: number[] = [];
  const session = new VoiceSession({
    transport,
    clock,
    vad: new EnergyVad(),
    stt,
    model,
    voices: [{ speech, voice: { provider: 'local', voiceId: 'en' } }],
    services: {
      searchKnowledge: async () => [],
      checkAvailability: async () => [],
      bookMeeting: async (i) => ({ booked: true, start: i.start }),
      transferToHuman: async () => ({ ok: false, error: 'none' }),
    },
    control: { hangUp: vi.fn() },
    systemPrompt: 'You are Ada.',
    firstMessage,
    onRecognitionTime: (ms) => recognitionTimes.push(ms),
  });
  const outcome = session.start();
  /** `ms` of caller audio, 20 ms a frame: a loud tone when speaking, else silence (Twilio sends frames all call long). */
  const run = async (ms: number, speaking = false, wide?: (i: number) => number) => {
    for (let t = 0; t < ms; t += 20) {
      clock.advance(20);
      if (web) {
        const bytes = Buffer.alloc(640);
        for (let i = 0; i < 320; i++) bytes.writeInt16LE(speaking && wide ? wide(i) : 0, i * 2);
        socket.emit('message', bytes, true);
      } else socket.media(speaking ? tone(160, 9000, 220) : silence());
      await flush();
    }
  };
  const agentSpeaking = () => speech.spoken.length;
  return { clock, socket, stt, speech, session, outcome, run, agentSpeaking, recognitionTimes };
}

describe('what a per-utterance recogniser is sent', () => {
  it('on the greeting turn and a later one: only the caller speech, from the start of speech less the pre-roll to its end plus the post-roll', async () => {
    // A greeting of 150 characters: 6 s of the agent speaking, the caller silent through it.
    const greeting =
      'Hello and thank you for calling the clinic, this is Ada speaking, and before we start I would like to tell you about our new opening hours this month.';
    const model = new ScriptedModel([
      [
        text(
          'We are open from nine in the morning until five in the evening on every weekday, and on Saturdays until noon.',
        ),
      ],
      [text('Goodbye.')],
    ]);
    const call = await startCall(greeting, model);
    await call.run(7500); // the greeting plays, then a second and a half of silence
    expect(call.stt.sent).toHaveLength(0);
    call.stt.answers.push('What are your opening hours?', 'Thank you, goodbye.');
    await call.run(1600, true); // the question: 1.6 s
    await call.run(1500);
    expect(call.stt.sent).toHaveLength(1);
    const [question] = call.stt.sent;
    expect(speechMsIn(question!)).toBe(1600);
    expect(msOf(question!)).toBe(1600 + PRE_ROLL_MS + POST_ROLL_MS);
    expect(msOf(question!) / 1600).toBeLessThanOrEqual(1.3);

    // The agent answers (about 4.5 s); the caller waits, then speaks again.
    await call.run(8000);
    expect(model.requests).toHaveLength(1);
    await call.run(1200, true);
    await call.run(1500);
    expect(call.stt.sent).toHaveLength(2);
    expect(speechMsIn(call.stt.sent[1]!)).toBe(1200);
    expect(msOf(call.stt.sent[1]!)).toBe(1200 + PRE_ROLL_MS + POST_ROLL_MS);
    // The recogniser's own time, cut to final, once per utterance (at once here: its answer is scripted).
    expect(call.recognitionTimes).toEqual([0, 0]);
    call.session.end();
    const outcome = await call.outcome;
    expect(outcome.transcript.filter((l) => l.role === 'caller').map((l) => l.text)).toEqual([
      'What are your opening hours?',
      'Thank you, goodbye.',
    ]);
  });

  it('a barge-in with no words is its own utterance: the next one holds nothing of it beyond the pre-roll', async () => {
    const greeting =
      'Thank you for calling the clinic where we are always happy to help you with anything you need today.';
    const call = await startCall(greeting, new ScriptedModel([[text('Sure.')]]));
    await call.run(1200);
    await call.run(400, true); // a noise over the agent: a barge-in, then no words (the recogniser answers nothing)
    expect(call.socket.count('clear')).toBe(1);
    await call.run(2600); // the false interruption: the agent resumes
    await call.run(6000);
    expect(call.stt.sent).toHaveLength(1);
    expect(msOf(call.stt.sent[0]!)).toBe(400 + PRE_ROLL_MS + POST_ROLL_MS);
    call.stt.answers.push('Can I book a meeting?');
    await call.run(1400, true);
    await call.run(1500);
    expect(call.stt.sent).toHaveLength(2);
    expect(speechMsIn(call.stt.sent[1]!)).toBe(1400);
    expect(msOf(call.stt.sent[1]!)).toBe(1400 + PRE_ROLL_MS + POST_ROLL_MS);
    call.session.end();
    await call.outcome;
  });

  it('a failed request: the reopened stream is given the same utterance again, not the replay buffer as one', async () => {
    const call = await startCall('Hello, this is Ada.', new ScriptedModel([[text('Of course.')]]));
    await call.run(3000);
    call.stt.answers.push(new ProviderFailure('openai', 'transcription refused (HTTP 503)', true), 'Can you hear me?');
    await call.run(1000, true);
    await call.run(1500);
    expect(call.stt.sent).toHaveLength(2);
    expect(Array.from(call.stt.sent[1]!)).toEqual(Array.from(call.stt.sent[0]!));
    expect(msOf(call.stt.sent[1]!)).toBe(1000 + PRE_ROLL_MS + POST_ROLL_MS);
    await call.run(2000);
    call.session.end();
    const outcome = await call.outcome;
    expect(outcome.transcript.filter((l) => l.role === 'caller').map((l) => l.text)).toEqual(['Can you hear me?']);
  });

  it("a browser call: the recogniser is sent the browser's own 16 kHz audio, not the phone band", async () => {
    const call = await startCall('Hello, this is Ada.', new ScriptedModel([[text('Of course.')]]), true);
    await call.run(3000);
    call.stt.answers.push('Hello?');
    // Loud, with a 4 kHz part in it that 8 kHz audio cannot carry.
    const wide = (i: number) =>
      Math.round(
        6000 * Math.sin((2 * Math.PI * 300 * i) / 16000) + 3000 * Math.sin((2 * Math.PI * 4000 * i) / 16000 + 0.5),
      );
    await call.run(1000, true, wide);
    await call.run(1500);
    expect(call.stt.rates).toEqual([16000]);
    const sent = call.stt.sent[0]!;
    expect((sent.length * 1000) / 16000).toBe(1000 + PRE_ROLL_MS + POST_ROLL_MS);
    const speech = sent.subarray((PRE_ROLL_MS * 16000) / 1000, (PRE_ROLL_MS * 16000) / 1000 + 320);
    expect(Array.from(speech)).toEqual(Array.from({ length: 320 }, (_, i) => wide(i)));
    call.session.end();
    await call.outcome;
  });
});
