// End-to-end: one behaviour per test, a whole call on a ManualClock with a
// fake Twilio socket (echoing marks as its audio "plays"), a scripted
// recogniser, the sandbox dialogue engine or a scripted model, tone voices.
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { ProviderFailure } from '../../../src/providers/failure.js';
import type { LanguageModel } from '../../../src/providers/language-model/interface.js';
import { SandboxDialogue } from '../../../src/providers/language-model/sandbox.js';
import { NoRecognition } from '../../../src/providers/speech-to-text/none.js';
import type { SpeechToText } from '../../../src/providers/speech-to-text/interface.js';
import {
  MAX_VAD_WAITING,
  VoiceSession,
  type TranscriptLine,
  type VoiceSettings,
} from '../../../src/modules/voice/session.js';
import { TwilioTransport, WebTransport, type Transport } from '../../../src/modules/voice/transport.js';
import { EnergyVad, type VoiceActivityDetector } from '../../../src/modules/voice/vad.js';
import { loadVoiceActivity } from '../../../src/modules/voice/silero-vad.js';
import { decodeWav, resample } from '../../../src/lib/audio.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeSocket, flush, ScriptedModel, ScriptedStt, silence, text, tone, ToneSpeech } from './fakes.js';

interface CallOptions {
  model?: LanguageModel;
  stt?: SpeechToText;
  firstMessage?: string;
  settings?: Partial<VoiceSettings>;
  echo?: boolean;
  web?: boolean;
  vad?: VoiceActivityDetector;
}

async function startCall(options: CallOptions = {}) {
  const clock = new ManualClock(0);
  const socket = new FakeSocket();
  if (options.echo !== false) socket.autoEcho = clock;
  let transport: Transport;
  // Caller audio is paced to real time on the call's clock (the tests' audio runs on the ManualClock).
  if (options.web) transport = new WebTransport(socket, undefined, { clock });
  else {
    const twilio = new TwilioTransport(socket, { clock });
    socket.start();
    await twilio.started;
    transport = twilio;
  }
  const stt = (options.stt ?? new ScriptedStt()) as ScriptedStt;
  const speech = new ToneSpeech('elevenlabs', clock, 100);
  const local = new ToneSpeech('espeak-ng', clock);
  const lines: TranscriptLine[] = [];
  const control = { hangUp: vi.fn(), transfer: vi.fn() };
  const model = options.model ?? new SandboxDialogue({ agentName: 'Ada' });
  const session = new VoiceSession({
    transport,
    clock,
    vad: options.vad ?? new EnergyVad(),
    stt,
    model,
    voices: [
      { speech, voice: { provider: 'elevenlabs', voiceId: 'v' } },
      { speech: local, voice: { provider: 'local', voiceId: 'en' } },
    ],
    services: {
      searchKnowledge: async () => [
        { text: 'Welcome. Our opening hours are nine to five on weekdays. Parking is free.' },
      ],
      checkAvailability: async () => ['2026-12-01T10:00:00Z'],
      bookMeeting: async (i) => ({ booked: true, start: i.start }),
      transferToHuman: async () => ({ ok: true, name: 'Sam' }),
    },
    control,
    systemPrompt: 'You are Ada.',
    firstMessage: options.firstMessage ?? 'Hello, this is Ada.',
    settings: options.settings,
    onTranscript: (line) => lines.push(line),
  });
  const outcome = session.start();
  let ended = false;
  void outcome.then(() => (ended = true));
  /** Moves the call on by `ms` of caller audio (a loud tone when speaking), 20 ms at a time. */
  const run = async (ms: number, speaking = false) => {
    for (let t = 0; t < ms && !ended; t += 20) {
      clock.advance(20);
      const frame = speaking ? tone(160, 9000, 220) : silence();
      if (options.web) {
        const wide = new Int16Array(320);
        for (let i = 0; i < 320; i++) wide[i] = frame[i >> 1]!;
        const bytes = Buffer.alloc(640);
        wide.forEach((s, i) => bytes.writeInt16LE(s, i * 2));
        socket.emit('message', bytes, true);
      } else socket.media(frame);
      await flush();
    }
  };
  /** The caller says something: speech for `ms`, the recogniser's final near its end, then silence. */
  const say = async (words: string, ms = 800) => {
    await run(ms - 100, true);
    stt.say(words);
    await run(100, true);
  };
  /** Plays real caller audio (any length), one Twilio frame per 20 ms, giving an asynchronous VAD real time to answer. */
  const play = async (samples: Int16Array) => {
    for (let i = 0; i + 160 <= samples.length && !ended; i += 160) {
      clock.advance(20);
      socket.media(samples.slice(i, i + 160));
      await new Promise((r) => setTimeout(r, 1));
      await flush();
    }
  };
  return {
    clock,
    socket,
    stt,
    speech,
    local,
    lines,
    control,
    session,
    outcome,
    run,
    say,
    play,
    model,
    isEnded: () => ended,
  };
}

describe('VoiceSession', () => {
  it('speaks the first message: paced audio out, a mark after it, a transcript line once heard', async () => {
    const call = await startCall();
    await call.run(200);
    const mediaAt200 = call.socket.count('media');
    // Paced: the voice's first byte comes after 100 ms; from then one frame per 20 ms plus a 40 ms lead, not the whole sentence.
    expect(mediaAt200).toBeGreaterThan(0);
    expect(mediaAt200).toBeLessThanOrEqual(7);
    await call.run(2000);
    expect(call.speech.spoken).toEqual(['Hello, this is Ada.']);
    expect(call.socket.marks().length).toBeGreaterThan(0);
    expect(call.lines).toEqual([{ role: 'agent', text: 'Hello, this is Ada.', startMs: 120, endMs: 880 }]); // the voice answers 100 ms after the first tick; 19 characters × 40 ms of tone, heard to its last mark
    call.session.end('test_over');
    const outcome = await call.outcome;
    expect(outcome.outcome).toBe('completed');
    expect(outcome.reason).toBe('test_over');
    expect(outcome.recording.caller.length).toBe(outcome.recording.agent.length);
    expect(outcome.recording.agent.some((s) => s !== 0)).toBe(true);
    expect(call.socket.closedWith).toEqual({ code: 1000, reason: 'call ended' });
  });

  it('a caller turn gets an answer through one tool call, recorded with its time, latency on the line', async () => {
    const call = await startCall();
    await call.run(1500);
    await call.say('Can you tell me your opening hours please?');
    await call.run(3000);
    expect(call.lines.map((l) => [l.role, l.text])).toEqual([
      ['agent', 'Hello, this is Ada.'],
      ['caller', 'Can you tell me your opening hours please?'],
      ['agent', 'Our opening hours are nine to five on weekdays.'],
    ]);
    const answer = call.lines[2]!;
    expect(answer.latency).toBeDefined();
    expect(answer.latency!.totalMs).toBeGreaterThanOrEqual(500); // endpoint (500 ms after a sentence) + voice first byte (100 ms)
    expect(answer.latency!.ttsFirstByteMs).toBeGreaterThanOrEqual(100);
    expect(call.lines[1]!.endMs).toBeLessThan(answer.startMs);
    call.session.end();
    const outcome = await call.outcome;
    expect(outcome.toolCalls).toEqual([
      {
        name: 'search_knowledge',
        arguments: { query: 'Can you tell me your opening hours please' },
        result: { matches: [{ text: 'Welcome. Our opening hours are nine to five on weekdays. Parking is free.' }] },
        atMs: expect.any(Number),
      },
    ]);
    expect(outcome.toolCalls[0]!.atMs).toBeGreaterThan(call.lines[1]!.endMs);
  });

  it('a turn ended on an interim (no final within VOICE_ENDPOINT_MAX_MS): the wait for the recogniser counts as speech-to-text, not as our overhead', async () => {
    const call = await startCall();
    await call.run(1500);
    await call.run(700, true);
    call.stt.say('Can you tell me your opening hours', false);
    await call.run(100, true);
    await call.run(7000);
    const answer = call.lines.find((l) => l.role === 'agent' && l.latency);
    expect(answer, JSON.stringify(call.lines)).toBeDefined();
    const l = answer!.latency!;
    expect(l.sttMs).toBeGreaterThanOrEqual(3000); // the endpoint's longest wait, spent hoping for a final
    expect(l.overheadMs).toBeLessThan(100);
    expect(l.overheadMs).toBe(l.totalMs - l.sttMs - l.llmFirstTokenMs - l.ttsFirstByteMs);
    call.session.end();
    await call.outcome;
  });

  it('barge-in: clear is sent, the reply stops, the history and transcript hold only what was heard', async () => {
    const long =
      'We have many different services for you and I will list every one of them now. The second sentence is never heard.';
    const model = new ScriptedModel([[text(long)], [text('Sure.')]]);
    const call = await startCall({ model });
    await call.run(1500);
    await call.say('What do you offer?');
    await call.run(1500); // the reply is playing
    expect(call.socket.count('clear')).toBe(0);
    await call.run(400, true); // the caller talks over it
    expect(call.socket.count('clear')).toBe(1);
    const mediaAfterClear = call.socket.count('media');
    await call.say('Wait, stop.', 400);
    await call.run(1500);
    const cut = call.lines.find((l) => l.interrupted)!;
    expect(cut).toBeDefined();
    expect(cut.role).toBe('agent');
    expect(long.startsWith(cut.text)).toBe(true);
    expect(cut.text.length).toBeGreaterThan(10);
    expect(cut.text.length).toBeLessThan(long.indexOf('.'));
    // The model's next request sees the heard part, marked as cut, and none of the unheard sentence.
    const messages = model.requests[1]!.messages;
    expect(messages.at(-2)).toEqual({ role: 'assistant', content: `${cut.text}…` });
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Wait, stop.' });
    expect(JSON.stringify(messages)).not.toContain('never heard');
    // The next answer's audio follows the clear.
    expect(call.socket.count('media')).toBeGreaterThan(mediaAfterClear);
    call.session.end();
    await call.outcome;
  });

  it('a false interruption (no words within 2 s) resumes from the cut', async () => {
    const long = 'Thank you for calling the clinic where we are always happy to help you with anything you need.';
    const call = await startCall({ firstMessage: long });
    await call.run(1200);
    await call.run(400, true); // a noise over the agent: barge-in
    expect(call.socket.count('clear')).toBe(1);
    await call.run(2600); // no words: false interruption at +2 s, resume
    await call.run(5000);
    const agentLines = call.lines.filter((l) => l.role === 'agent');
    expect(agentLines[0]!.interrupted).toBe(true);
    expect(agentLines[1]!.interrupted).toBeUndefined();
    // The resumed line starts where the heard part stopped: together they are the whole message.
    expect(`${agentLines[0]!.text} ${agentLines[1]!.text}`).toBe(long);
    expect(call.speech.spoken.at(-1)).toBe(agentLines[1]!.text);
    expect(call.lines.some((l) => l.role === 'caller')).toBe(false);
    call.session.end();
    await call.outcome;
  });

  it('silence: reprompts 8 s after the last heard mark, twice, then ends the call', async () => {
    const call = await startCall();
    await call.run(40_000);
    expect(call.isEnded()).toBe(true);
    const outcome = await call.outcome;
    expect(outcome.outcome).toBe('completed');
    expect(outcome.reason).toBe('silence');
    expect(call.speech.spoken).toEqual(['Hello, this is Ada.', 'Are you still there?', 'Are you still there?']);
    const agent = outcome.transcript.filter((l) => l.role === 'agent');
    expect(agent).toHaveLength(3);
    // 8 s after the previous line finished playing (its last mark echoed), give or take a tick.
    expect(agent[1]!.startMs - agent[0]!.endMs).toBeGreaterThanOrEqual(8000);
    expect(agent[1]!.startMs - agent[0]!.endMs).toBeLessThan(8000 + 300);
    expect(outcome.durationMs - agent[2]!.endMs).toBeGreaterThanOrEqual(8000);
    expect(outcome.durationMs - agent[2]!.endMs).toBeLessThan(8100);
    expect(call.control.hangUp).toHaveBeenCalledOnce();
  });

  it('a dropped recognition stream is reopened and the audio since the drop replayed: no word lost', async () => {
    const call = await startCall();
    await call.run(1500);
    await call.run(600, true); // the caller starts speaking …
    const first = call.stt.streams[0]!;
    const framesBeforeDrop = first.written.length;
    call.stt.drop(); // … and the socket drops mid-sentence
    await flush();
    expect(call.stt.streams).toHaveLength(2);
    const second = call.stt.streams[1]!;
    // Everything not yet recognised (no final so far; at most 5 s) went into the new stream first.
    expect(second.written.length).toBe(Math.min(framesBeforeDrop, 250));
    expect(second.written.slice(-30)).toEqual(first.written.slice(-30));
    await call.run(300, true);
    call.stt.say('Can you tell me your opening hours please?');
    await call.run(3000);
    expect(call.lines.filter((l) => l.role === 'caller').map((l) => l.text)).toEqual([
      'Can you tell me your opening hours please?',
    ]);
    expect(call.lines.at(-1)!.text).toBe('Our opening hours are nine to five on weekdays.');
    call.session.end();
    expect((await call.outcome).outcome).toBe('completed');
  });

  it('a recogniser that cannot be reopened ends the call provider_error, naming it', async () => {
    const opened: number[] = [];
    let clock: ManualClock | null = null;
    const failing: SpeechToText = {
      name: 'deepgram',
      streaming: true,
      open() {
        opened.push(clock?.now() ?? 0);
        throw new ProviderFailure('deepgram', '401 Unauthorized', false);
      },
    };
    const call = await startCall({ stt: failing as unknown as ScriptedStt });
    clock = call.clock;
    await call.run(5000);
    const outcome = await call.outcome;
    // Opened at the start, again at once, then after 0.5 s and 1 s more: four tries, then the call ends.
    expect(opened).toEqual([0, 0, 500, 1500]);
    expect(outcome.outcome).toBe('provider_error');
    expect(outcome.error).toEqual({ provider: 'deepgram', message: '401 Unauthorized' });
  });

  it('the model failing with 5xx is retried once, then the agent says one apology line', async () => {
    const model = new ScriptedModel([
      new ProviderFailure('openai', '500 Internal Server Error'),
      new ProviderFailure('openai', '503 Service Unavailable'),
    ]);
    const call = await startCall({ model });
    await call.run(1500);
    await call.say('Hello?');
    await call.run(6000);
    expect(model.requests).toHaveLength(2);
    const agent = call.lines.filter((l) => l.role === 'agent');
    expect(agent.at(-1)!.text).toBe("I'm sorry, I'm having trouble answering right now. Could you say that again?");
    expect(call.isEnded()).toBe(false);
    call.session.end();
    await call.outcome;
  });

  it('ends at the maximum duration with outcome max_duration, hanging up', async () => {
    const call = await startCall({ settings: { maxDurationMs: 5000 } });
    await call.run(6000, true);
    const outcome = await call.outcome;
    expect(outcome.outcome).toBe('max_duration');
    expect(outcome.durationMs).toBe(5000);
    expect(call.control.hangUp).toHaveBeenCalledOnce();
  });

  it('end_call hangs up only after the goodbye has played (its last mark echoed)', async () => {
    const call = await startCall({ echo: false });
    await call.run(1500);
    call.socket.echoMarks();
    await call.run(100);
    await call.say('No thank you, goodbye.');
    await call.run(3000);
    expect(call.speech.spoken.slice(-2)).toEqual(['Thank you for calling.', 'Goodbye!']);
    expect(call.control.hangUp).not.toHaveBeenCalled(); // the goodbye's marks are not back yet
    call.socket.echoMarks();
    await flush();
    await flush();
    expect(call.control.hangUp).toHaveBeenCalledOnce();
    const outcome = await call.outcome;
    expect(outcome).toMatchObject({ outcome: 'completed', reason: 'agent_ended' });
    expect(outcome.toolCalls.map((t) => t.name)).toEqual(['end_call']);
    expect(outcome.transcript.at(-1)!.text).toBe('Thank you for calling. Goodbye!');
  });

  it('transfer_to_human hands the call over after the line is heard: outcome transferred', async () => {
    const call = await startCall();
    await call.run(1500);
    await call.say('Can I speak to a person?');
    await call.run(4000);
    expect(call.control.transfer).toHaveBeenCalledWith({ ok: true, name: 'Sam' });
    const outcome = await call.outcome;
    expect(outcome.outcome).toBe('transferred');
    expect(outcome.toolCalls.map((t) => t.name)).toEqual(['transfer_to_human']);
  });

  it('an answering machine: the greeting stops, the voicemail message is spoken once, then hang-up with outcome voicemail', async () => {
    const call = await startCall({
      firstMessage: 'Hello, this is Ada calling about your appointment next week, do you have a minute?',
    });
    await call.run(600);
    call.session.leaveVoicemail('Please call us back.');
    expect(call.socket.count('clear')).toBe(1);
    await call.run(400, true); // the machine's beep and noise are not a caller
    await call.run(3000);
    const outcome = await call.outcome;
    expect(outcome).toMatchObject({ outcome: 'voicemail', reason: 'voicemail' });
    expect(call.speech.spoken.at(-1)).toBe('Please call us back.');
    expect(outcome.transcript.at(-1)).toMatchObject({ role: 'agent', text: 'Please call us back.' });
    expect(call.control.hangUp).toHaveBeenCalledOnce();
  });

  it('the carrier stopping the stream while it hangs up or transfers (before its answer) keeps the outcome the agent chose', async () => {
    const stop = (call: Awaited<ReturnType<typeof startCall>>) => async () => {
      call.socket.receive({
        event: 'stop',
        sequenceNumber: '99',
        streamSid: 'MZ0001',
        stop: { accountSid: 'AC1', callSid: 'CA1' },
      });
      await flush();
    };
    const machine = await startCall();
    machine.control.hangUp.mockImplementation(stop(machine));
    await machine.run(600);
    machine.session.leaveVoicemail('Please call us back.');
    await machine.run(3000);
    expect(await machine.outcome).toMatchObject({ outcome: 'voicemail', reason: 'voicemail' });

    const transfer = await startCall();
    transfer.control.transfer.mockImplementation(stop(transfer));
    await transfer.run(1500);
    await transfer.say('Can I speak to a person?');
    await transfer.run(4000);
    expect(await transfer.outcome).toMatchObject({ outcome: 'transferred', reason: 'transferred' });
  });

  it('with no recogniser, each utterance the VAD cuts is "(speech not recognised)" and is asked again', async () => {
    const call = await startCall({ stt: new NoRecognition() as unknown as ScriptedStt });
    await call.run(1500);
    await call.run(800, true);
    await call.run(4000);
    expect(call.lines.map((l) => [l.role, l.text])).toEqual([
      ['agent', 'Hello, this is Ada.'],
      ['caller', '(speech not recognised)'],
      ['agent', "Sorry, I didn't catch that. Could you say that again?"],
    ]);
    call.session.end();
    await call.outcome;
  });

  it('the caller hanging up ends the call completed', async () => {
    const call = await startCall();
    await call.run(500);
    call.socket.receive({
      event: 'stop',
      sequenceNumber: '99',
      streamSid: 'MZ0001',
      stop: { accountSid: 'AC1', callSid: 'CA1' },
    });
    expect(await call.outcome).toMatchObject({ outcome: 'completed', reason: 'stream_stopped' });
    expect(call.control.hangUp).not.toHaveBeenCalled();
  });

  it('runs the same session over the browser transport: binary audio out, transcript and tool notices, ended', async () => {
    const call = await startCall({ web: true });
    // The browser's echo, in its own framing (a Twilio-framed one would be an invalid message and close the socket).
    const echoWebMarks = () => {
      for (const m of call.socket.sent.filter((m) => !Buffer.isBuffer(m) && m.type === 'mark'))
        call.socket.emit('message', JSON.stringify({ type: 'mark', name: m.name }), false);
    };
    await call.run(1500);
    echoWebMarks();
    await call.run(100);
    await call.say('Can you tell me your opening hours please?');
    await call.run(4000);
    echoWebMarks();
    await call.run(100);
    const json = call.socket.sent.filter((m) => !Buffer.isBuffer(m));
    expect(call.socket.sent.filter((m) => Buffer.isBuffer(m)).every((b: Buffer) => b.length === 640)).toBe(true);
    expect(json).toContainEqual({
      type: 'transcript',
      role: 'caller',
      text: 'Can you tell me your opening hours please?',
      final: true,
    });
    expect(json).toContainEqual(expect.objectContaining({ type: 'tool', name: 'search_knowledge' }));
    call.session.end('caller_left');
    await call.outcome;
    expect(call.socket.sent.at(-1)).toEqual({ type: 'ended', reason: 'caller_left' });
    expect(call.socket.closedWith).toEqual({ code: 1000, reason: 'caller_left' });
  });

  it("gives a wideband recogniser the browser's own 16 kHz frames, and a phone-band one the 8 kHz frames", async () => {
    for (const wideband of [true, false]) {
      const stt = new ScriptedStt(wideband);
      const call = await startCall({ web: true, stt });
      await call.run(400, true);
      expect(stt.opened[0]!.sampleRate).toBe(wideband ? 16_000 : undefined);
      const written = stt.current.written;
      expect(written.length).toBeGreaterThanOrEqual(15);
      expect(written.every((f) => f.length === (wideband ? 320 : 160))).toBe(true);
      // The frames the browser sent, sample for sample (run() sends each 8 kHz tone sample twice).
      const loud = written.at(-1)!;
      if (wideband) for (let i = 0; i < 320; i += 2) expect(loud[i]).toBe(loud[i + 1]);
      call.session.end('test_over');
      await call.outcome;
    }
  });

  it('a slow voice activity detector: at most a second of frames wait for it, and none is run once the call has ended', async () => {
    let runs = 0;
    const answers: Array<(p: number) => void> = [];
    const slow: VoiceActivityDetector = {
      name: 'slow',
      process: () => {
        runs++;
        return new Promise<number>((resolve) => answers.push(resolve));
      },
    };
    const call = await startCall({ vad: slow });
    await call.run(5000); // 250 frames; the detector has not answered the first
    expect(runs).toBe(1);
    expect(call.session.vadSkipped).toBe(250 - 1 - MAX_VAD_WAITING);
    call.session.end('test_over');
    await call.outcome;
    for (const answer of answers.splice(0)) answer(0.9);
    await flush();
    await flush();
    // The 50 frames that waited are dropped with the call, not run after it.
    expect(runs).toBe(1);
  });

  it('a far end flooding audio far faster than real time is shut out: outcome refused, reason audio_flood, nothing more decided', async () => {
    const call = await startCall();
    await call.run(1000);
    const linesBefore = call.lines.length;
    // Ten seconds of caller audio at once (no time passes): the 2 s burst is taken, then the stream is shut out.
    for (let i = 0; i < 500; i++) call.socket.media(tone(160, 9000, 220));
    const outcome = await call.outcome;
    expect(outcome).toMatchObject({ outcome: 'refused', reason: 'audio_flood' });
    expect(call.socket.closedWith).toEqual({ code: 1008, reason: 'audio_flood' });
    await call.run(1000);
    expect(call.lines.length).toBe(linesBefore);
  });

  it('ends at once when the far end left while the call was being set up', async () => {
    const socket = new FakeSocket();
    const transport = new WebTransport(socket);
    socket.emit('close');
    const session = new VoiceSession({
      transport,
      clock: new ManualClock(0),
      vad: new EnergyVad(),
      stt: new ScriptedStt(),
      model: new SandboxDialogue(),
      voices: [],
      services: {
        searchKnowledge: async () => [],
        checkAvailability: async () => [],
        bookMeeting: async (i) => ({ booked: false, start: i.start }),
        transferToHuman: async () => ({ ok: false, message: 'none' }),
      },
      control: { hangUp: vi.fn() },
      systemPrompt: 'You are Ada.',
      firstMessage: 'Hello.',
    });
    expect(await session.start()).toMatchObject({ outcome: 'completed', reason: 'socket_closed', transcript: [] });
  });

  it('with Silero on real speech (espeak-ng through the phone path), the caller turn is found and answered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'session-'));
    let speech: Int16Array;
    try {
      execFileSync('espeak-ng', ['-w', join(dir, 'a.wav'), 'Hello, who is this?']);
      const wav = decodeWav(readFileSync(join(dir, 'a.wav')));
      speech = resample(wav.samples, wav.sampleRate, 8000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const vad = await loadVoiceActivity();
    expect(vad.kind).toBe('silero');
    const call = await startCall({ vad: vad.create() });
    await call.play(new Int16Array(8000 * 2)); // the greeting plays over caller silence
    await call.play(speech);
    call.stt.say('Hello, who is this?');
    await call.play(new Int16Array(8000 * 3));
    expect(call.lines.map((l) => [l.role, l.text])).toEqual([
      ['agent', 'Hello, this is Ada.'],
      ['caller', 'Hello, who is this?'],
      ['agent', 'Hello! This is Ada. How can I help you today?'],
    ]);
    // The caller line spans the speech Silero found (within the clip, which has a little silence at its ends).
    const caller = call.lines[1]!;
    expect(caller.startMs).toBeGreaterThanOrEqual(2000);
    expect(caller.endMs).toBeLessThanOrEqual(2000 + speech.length / 8 + 20);
    expect(caller.endMs - caller.startMs).toBeGreaterThan(500);
    call.session.end();
    await call.outcome;
  });
});
