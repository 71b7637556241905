// What a live call shows of the agent as it speaks (issue 44 "Speaking"): a
// whole call on a ManualClock with a fake Twilio socket echoing marks as its
// audio "plays", tone voices, a scripted recogniser and the sandbox dialogue
// engine or a scripted model. Agent lines are told as each sentence starts,
// a barge-in's cut sentence is followed by its heard part; a tool call in
// flight at a barge-in is cancelled when it only reads and completes (told
// later) when it acts; a call is offered only the tools it can use; a
// low-confidence word is not acted on.
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { ProviderFailure } from '../../../src/providers/failure.js';
import type { LanguageModel } from '../../../src/providers/language-model/interface.js';
import { SandboxDialogue } from '../../../src/providers/language-model/sandbox.js';
import type { LiveLine } from '../../../src/modules/voice/live-lines.js';
import { DEFAULT_APOLOGY } from '../../../src/modules/voice/reply.js';
import { VoiceSession, type TranscriptLine } from '../../../src/modules/voice/session.js';
import type { ToolServices } from '../../../src/modules/voice/tools.js';
import { type Transport, TwilioTransport, type TransportNotice } from '../../../src/modules/voice/transport.js';
import { EnergyVad } from '../../../src/modules/voice/vad.js';
import { FakeSocket, flush, ScriptedModel, ScriptedStt, silence, text, tone, ToneSpeech, toolCall } from './fakes.js';

const ALL_SERVICES: ToolServices = {
  searchKnowledge: async () => [{ text: 'Our opening hours are nine to five on weekdays.' }],
  checkAvailability: async () => ['2026-12-01T10:00:00Z'],
  bookMeeting: async (i) => ({ booked: true, start: i.start }),
  transferToHuman: async () => ({ ok: true, name: 'Sam' }),
};

interface Options {
  model?: LanguageModel;
  services?: ToolServices;
  firstMessage?: string;
  minConfidence?: number;
}

async function startCall(options: Options = {}) {
  const clock = new ManualClock(0);
  const socket = new FakeSocket();
  socket.autoEcho = clock;
  const transport = new TwilioTransport(socket, { clock });
  socket.start();
  await transport.started;
  // The browser's messages, with the clock time and the agent frames sent when each was sent.
  const notices: Array<{ notice: TransportNotice; atMs: number; framesOut: number }> = [];
  vi.spyOn(transport as Transport, 'notify').mockImplementation((notice: TransportNotice) => {
    notices.push({ notice, atMs: clock.now(), framesOut: socket.count('media') });
  });
  const stt = new ScriptedStt();
  const speech = new ToneSpeech('espeak-ng', clock);
  const lines: TranscriptLine[] = [];
  const live: Array<LiveLine & { atMs: number; framesOut: number }> = [];
  const control = { hangUp: vi.fn(), transfer: vi.fn() };
  const model = options.model ?? new SandboxDialogue({ agentName: 'Ada' });
  const session = new VoiceSession({
    transport,
    clock,
    vad: new EnergyVad(),
    stt,
    model,
    voices: [{ speech, voice: { provider: 'local', voiceId: 'en' } }],
    services: options.services ?? ALL_SERVICES,
    control,
    systemPrompt: 'You are Ada.',
    firstMessage: options.firstMessage ?? 'Hello, this is Ada.',
    ...(options.minConfidence !== undefined ? { minConfidence: options.minConfidence } : {}),
    onTranscript: (line) => lines.push(line),
    onLiveLine: (line) => live.push({ ...line, atMs: clock.now(), framesOut: socket.count('media') }),
  });
  const outcome = session.start();
  let ended = false;
  void outcome.then(() => (ended = true));
  const run = async (ms: number, speaking = false) => {
    for (let t = 0; t < ms && !ended; t += 20) {
      clock.advance(20);
      socket.media(speaking ? tone(160, 9000, 220) : silence());
      await flush();
    }
  };
  /** The caller speaks for `ms`; the recogniser's final (with its confidence) near the end. */
  const say = async (words: string, ms = 800, confidence?: number) => {
    await run(ms - 100, true);
    const audioMs = stt.current.written.length * 20;
    stt.current.push({
      text: words,
      final: true,
      startMs: 0,
      endMs: audioMs,
      ...(confidence !== undefined ? { confidence } : {}),
    });
    await run(100, true);
  };
  const transcriptNotices = () => notices.filter((n) => n.notice.type === 'transcript').map((n) => n.notice);
  return {
    clock,
    socket,
    stt,
    speech,
    lines,
    live,
    notices,
    transcriptNotices,
    control,
    session,
    outcome,
    run,
    say,
    model,
    isEnded: () => ended,
  };
}

/** A service the test settles when it wants, recording the signal it was given. */
function pending<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  const signals: AbortSignal[] = [];
  return { promise, resolve, signals };
}

describe('agent lines as they are said', () => {
  it('each sentence is told when its first frame goes out, long before its audio ends; the record keeps the reply as heard', async () => {
    const call = await startCall({ firstMessage: 'Hello, this is Ada from the clinic. How can I help you today?' });
    await call.run(6000);
    // 35 + 25 characters × 40 ms of tone: 70 frames, then 50; the sentences' audio ends at 1.4 s and 2.4 s.
    expect(call.live.map(({ role, text }) => ({ role, text }))).toEqual([
      { role: 'agent', text: 'Hello, this is Ada from the clinic.' },
      { role: 'agent', text: 'How can I help you today?' },
    ]);
    const [first, second] = call.live;
    const record = call.lines[0]!;
    expect(record).toMatchObject({
      role: 'agent',
      text: 'Hello, this is Ada from the clinic. How can I help you today?',
    });
    // Told with the first frame of its sentence (at most the pacer's lead of two frames out with it) …
    expect(first!.framesOut).toBeLessThanOrEqual(3);
    expect(first!.atMs).toBeLessThan(100);
    // … the second sentence as it starts, after the first sentence's 70 frames, a second before its own audio ends.
    expect(second!.framesOut).toBeGreaterThanOrEqual(71);
    expect(second!.framesOut).toBeLessThanOrEqual(73);
    expect(record.endMs - second!.atMs).toBeGreaterThanOrEqual(950);
    // The browser's line grows sentence by sentence (final: false), then comes as heard (final: true) once played.
    expect(call.transcriptNotices()).toEqual([
      { type: 'transcript', role: 'agent', text: 'Hello, this is Ada from the clinic.', final: false },
      {
        type: 'transcript',
        role: 'agent',
        text: 'Hello, this is Ada from the clinic. How can I help you today?',
        final: false,
      },
      {
        type: 'transcript',
        role: 'agent',
        text: 'Hello, this is Ada from the clinic. How can I help you today?',
        final: true,
      },
    ]);
    const heardNotice = call.notices.find((n) => n.notice.type === 'transcript' && n.notice.final)!;
    expect(heardNotice.atMs).toBeGreaterThanOrEqual(record.endMs);
    call.session.end();
    await call.outcome;
  });

  it('a sentence cut by barge-in is followed by its heard part, interrupted; the record keeps what was heard', async () => {
    const firstMessage =
      'Thank you for calling the clinic. We are open on every weekday from nine in the morning. Ask me anything.';
    const call = await startCall({ firstMessage });
    await call.run(2000); // the first sentence (33 characters: 1.3 s) has played, the second is under way
    await call.run(400, true); // the caller talks over it
    expect(call.socket.count('clear')).toBe(1);
    await call.say('When do you close?', 400);
    await call.run(3000);
    const agentLive = call.live.filter((l) => l.role === 'agent');
    const cut = agentLive[2]!;
    expect(agentLive.slice(0, 2).map((l) => [l.text, l.interrupted])).toEqual([
      ['Thank you for calling the clinic.', undefined],
      ['We are open on every weekday from nine in the morning.', undefined],
    ]);
    expect(cut.interrupted).toBe(true);
    expect('We are open on every weekday from nine in the morning.'.startsWith(cut.text)).toBe(true);
    expect(cut.text.length).toBeGreaterThan(5);
    // Told as the cut is known, before the caller's line that cut it.
    const callerAt = call.live.findIndex((l) => l.role === 'caller');
    expect(call.live.indexOf(cut)).toBeLessThan(callerAt);
    // The record: the reply as heard, marked interrupted; the third sentence was never told.
    const record = call.lines.find((l) => l.interrupted)!;
    expect(record.text).toBe(`Thank you for calling the clinic. ${cut.text}`);
    expect(call.live.some((l) => l.text === 'Ask me anything.')).toBe(false);
    expect(call.transcriptNotices().find((n) => n.type === 'transcript' && n.final && n.role === 'agent')).toEqual({
      type: 'transcript',
      role: 'agent',
      text: record.text,
      final: true,
      interrupted: true,
    });
    call.session.end();
    await call.outcome;
  });

  it('the apology after a failing model is a line like any other: told as it starts', async () => {
    const model = new ScriptedModel([
      new ProviderFailure('openai', '500 Internal Server Error'),
      new ProviderFailure('openai', '503 Service Unavailable'),
    ]);
    const call = await startCall({ model });
    await call.run(1500);
    await call.say('Hello?');
    await call.run(800);
    // Its first sentence is told as it starts (0.3 s ago); its audio (50 characters: 2 s) has not ended yet.
    expect(call.live.filter((l) => l.role === 'agent').map((l) => l.text)).toEqual([
      'Hello, this is Ada.',
      "I'm sorry, I'm having trouble answering right now.",
    ]);
    expect(call.lines.filter((l) => l.role === 'agent')).toHaveLength(1); // only the greeting is in the record yet
    await call.run(5000);
    expect(call.lines.at(-1)).toMatchObject({ role: 'agent', text: DEFAULT_APOLOGY });
    expect(call.live.filter((l) => l.role === 'agent').map((l) => l.text)).toEqual([
      'Hello, this is Ada.',
      "I'm sorry, I'm having trouble answering right now.",
      'Could you say that again?',
    ]);
    call.session.end();
    await call.outcome;
  });
});

describe('a barge-in while a tool call runs', () => {
  it('a lookup (search_knowledge) is cancelled: its signal aborts, it is not recorded and the model never hears of it', async () => {
    const search = pending<Array<{ text: string }>>();
    const model = new ScriptedModel([
      [text('Let me look that up. '), toolCall('c1', 'search_knowledge', { query: 'hours' })],
      [text('Sure.')],
    ]);
    const call = await startCall({
      model,
      services: {
        ...ALL_SERVICES,
        searchKnowledge: (_q, signal) => {
          search.signals.push(signal);
          return search.promise;
        },
      },
    });
    await call.run(1500);
    await call.say('What are your hours?');
    await call.run(1500); // "Let me look that up." has played; the search hangs
    expect(search.signals).toHaveLength(1);
    await call.run(400, true);
    expect(search.signals[0]!.aborted).toBe(true);
    search.resolve([{ text: 'Nine to five.' }]);
    await call.say('Never mind.', 400);
    await call.run(2000);
    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests[1]!.messages)).not.toContain('search_knowledge');
    call.session.end();
    expect((await call.outcome).toolCalls).toEqual([]);
  });

  it('a booking sent goes on: its result is not spoken into the new turn, it is recorded and the model is told on its next turn', async () => {
    const booking = pending<{ booked: boolean; start: string }>();
    const model = new ScriptedModel([
      [text("I'll book ten o'clock for you. "), toolCall('b1', 'book_meeting', { start: '2026-12-01T10:00:00Z' })],
      [text('Go ahead.')],
      [text('It is booked.')],
    ]);
    const call = await startCall({
      model,
      services: {
        ...ALL_SERVICES,
        bookMeeting: (_input, signal) => {
          booking.signals.push(signal);
          return booking.promise;
        },
      },
    });
    await call.run(1500);
    await call.say('Book Tuesday at ten.');
    await call.run(2000); // the line has played; the booking is with the calendar
    await call.run(400, true); // the caller speaks over the wait
    expect(call.socket.count('clear')).toBe(1);
    expect(booking.signals[0]!.aborted).toBe(false);
    booking.resolve({ booked: true, start: '2026-12-01T10:00:00Z' });
    await flush();
    await call.say('Actually, one more question.', 600);
    await call.run(3000);
    // The model's next request (the new turn) holds the booking and its result before the caller's new words.
    const next = model.requests[1]!.messages;
    expect(next.slice(-3)).toEqual([
      // Heard whole before the caller spoke: not marked as cut.
      {
        role: 'assistant',
        content: "I'll book ten o'clock for you.",
        tool_calls: [expect.objectContaining({ id: 'b1' })],
      },
      { role: 'tool', tool_call_id: 'b1', content: JSON.stringify({ booked: true, start: '2026-12-01T10:00:00Z' }) },
      { role: 'user', content: 'Actually, one more question.' },
    ]);
    // Nothing about it was said into the new turn: the cut reply said no more, the next answer is the model's to the new words.
    expect(call.speech.spoken).toEqual(['Hello, this is Ada.', "I'll book ten o'clock for you.", 'Go ahead.']);
    call.session.end();
    const outcome = await call.outcome;
    expect(outcome.toolCalls).toEqual([
      {
        name: 'book_meeting',
        arguments: { start: '2026-12-01T10:00:00Z' },
        result: { booked: true, start: '2026-12-01T10:00:00Z' },
        atMs: expect.any(Number),
      },
    ]);
  });

  it('a transfer arranged after the caller spoke over its announcement is not carried out', async () => {
    const transfer = pending<{ ok: boolean; name: string }>();
    const model = new ScriptedModel([
      [text('Let me put you through to a colleague now. '), toolCall('t1', 'transfer_to_human', {})],
      [text('Of course.')],
    ]);
    const call = await startCall({ model, services: { ...ALL_SERVICES, transferToHuman: () => transfer.promise } });
    await call.run(1500);
    await call.say('Can I speak to a person?');
    await call.run(2500);
    await call.run(400, true);
    transfer.resolve({ ok: true, name: 'Sam' });
    await call.say('No, wait.', 400);
    await call.run(4000);
    expect(call.control.transfer).not.toHaveBeenCalled();
    expect(call.isEnded()).toBe(false);
    call.session.end();
    expect((await call.outcome).toolCalls.map((t) => t.name)).toEqual(['transfer_to_human']);
  });

  it('the end of the call waits for a booking still running, so the record has its result', async () => {
    const booking = pending<{ booked: boolean; start: string }>();
    const model = new ScriptedModel([
      [text("I'll book it. "), toolCall('b1', 'book_meeting', { start: '2026-12-01T10:00:00Z' })],
    ]);
    const call = await startCall({ model, services: { ...ALL_SERVICES, bookMeeting: () => booking.promise } });
    await call.run(1500);
    await call.say('Book Tuesday at ten.');
    await call.run(1500);
    await call.run(400, true);
    call.session.end('caller_hung_up');
    await flush();
    let settled = false;
    void call.outcome.then(() => (settled = true));
    await flush();
    expect(settled).toBe(false);
    booking.resolve({ booked: true, start: '2026-12-01T10:00:00Z' });
    const outcome = await call.outcome;
    expect(outcome.toolCalls.map((t) => t.name)).toEqual(['book_meeting']);
  });
});

describe('the tools a call is offered', () => {
  it('only those whose services it has (end_call always); the sandbox engine then cannot book', async () => {
    const asked: string[][] = [];
    const engine = new SandboxDialogue({ agentName: 'Ada' });
    const model: LanguageModel = {
      name: 'sandbox',
      sandbox: true,
      complete(request) {
        asked.push(request.tools.map((t) => t.name));
        return engine.complete(request);
      },
    };
    const call = await startCall({ model, services: { searchKnowledge: ALL_SERVICES.searchKnowledge } });
    await call.run(1500);
    await call.say('I would like to book a meeting for next Tuesday.');
    await call.run(6000);
    expect(asked[0]).toEqual(['search_knowledge', 'end_call']);
    expect(call.lines.at(-1)!.text).toBe(
      "I'm sorry, I can't book meetings on this call, but I'm happy to help with anything else.",
    );
    call.session.end();
    expect((await call.outcome).toolCalls).toEqual([]);
  });

  it('a call with every service is offered every tool', async () => {
    const model = new ScriptedModel([[text('Okay.')]]);
    const call = await startCall({ model });
    await call.run(1500);
    await call.say('Hello?');
    await call.run(2000);
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual([
      'search_knowledge',
      'check_availability',
      'book_meeting',
      'transfer_to_human',
      'end_call',
    ]);
    call.session.end();
    await call.outcome;
  });
});

describe('recognition confidence', () => {
  it('a word below the call\'s confidence floor is not acted on: recorded with its text, the model is given "(unclear)" and asks again', async () => {
    const call = await startCall({ minConfidence: 0.25 });
    await call.run(1500);
    await call.say('bye', 600, 0.2);
    await call.run(4000);
    expect(call.lines.filter((l) => l.role === 'caller').map((l) => l.text)).toEqual(['bye (unclear)']);
    expect(call.lines.at(-1)!.text).toBe("Sorry, I didn't catch that. Could you say that again?");
    expect(call.control.hangUp).not.toHaveBeenCalled();
    expect(call.isEnded()).toBe(false);
    // Said surely, the same word ends the call.
    await call.say('bye', 600, 0.9);
    await call.run(5000);
    expect(call.lines.filter((l) => l.role === 'caller').map((l) => l.text)).toEqual(['bye (unclear)', 'bye']);
    expect(call.control.hangUp).toHaveBeenCalledOnce();
    expect((await call.outcome).reason).toBe('agent_ended');
  });

  it('without a floor (a recogniser whose confidence is not used), a low confidence changes nothing', async () => {
    const call = await startCall();
    await call.run(1500);
    await call.say('bye', 600, 0.2);
    await call.run(5000);
    expect(call.lines.filter((l) => l.role === 'caller').map((l) => l.text)).toEqual(['bye']);
    expect((await call.outcome).reason).toBe('agent_ended');
  });
});
