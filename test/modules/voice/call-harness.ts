// One VoiceSession on a ManualClock with a fake Twilio socket echoing marks
// as its audio plays, a scripted recogniser and tone voices: the caller
// "speaks" by tone and the recogniser's final. Shared by the session tests
// that need a whole call (pathways, custom tools).
import { vi } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import type { LanguageModel } from '../../../src/providers/language-model/interface.js';
import { type TranscriptLine, VoiceSession, type VoiceSessionOptions } from '../../../src/modules/voice/session.js';
import type { ToolServices } from '../../../src/modules/voice/tools.js';
import { TwilioTransport } from '../../../src/modules/voice/transport.js';
import { EnergyVad } from '../../../src/modules/voice/vad.js';
import { FakeSocket, flush, ScriptedStt, silence, tone, ToneSpeech } from './fakes.js';

export type HarnessOptions = Partial<
  Pick<VoiceSessionOptions, 'firstMessage' | 'systemPrompt' | 'settings' | 'customTools' | 'variables'>
> & {
  model: LanguageModel;
  services?: ToolServices;
  /** Builds the pathway option with the call's clock (a walker needs it). */
  pathway?: (clock: ManualClock) => VoiceSessionOptions['pathway'];
};

export async function startHarnessCall(options: HarnessOptions) {
  const clock = new ManualClock(Date.parse('2026-12-01T09:00:00Z'));
  const socket = new FakeSocket();
  socket.autoEcho = clock;
  const transport = new TwilioTransport(socket, { clock });
  socket.start();
  await transport.started;
  const stt = new ScriptedStt();
  const speech = new ToneSpeech('espeak-ng', clock);
  const lines: TranscriptLine[] = [];
  const control = { hangUp: vi.fn(), transfer: vi.fn() };
  const session = new VoiceSession({
    transport,
    clock,
    vad: new EnergyVad(),
    stt,
    model: options.model,
    voices: [{ speech, voice: { provider: 'local', voiceId: 'en' } }],
    services: options.services ?? {},
    control,
    systemPrompt: options.systemPrompt ?? 'You are Ada.',
    ...(options.firstMessage !== undefined ? { firstMessage: options.firstMessage } : {}),
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.pathway ? { pathway: options.pathway(clock) } : {}),
    ...(options.customTools ? { customTools: options.customTools } : {}),
    ...(options.variables ? { variables: options.variables } : {}),
    onTranscript: (line) => lines.push(line),
  });
  const outcome = session.start();
  let ended = false;
  void outcome.then(() => (ended = true));
  /** Moves the call on by `ms` of caller audio (a loud tone when speaking), 20 ms at a time. */
  const run = async (ms: number, speaking = false) => {
    for (let t = 0; t < ms && !ended; t += 20) {
      clock.advance(20);
      socket.media(speaking ? tone(160, 9000, 220) : silence());
      await flush();
    }
  };
  /** The caller says something: speech for `ms`, the recogniser's final near its end, then 1.5 s of silence (the turn ends). */
  const say = async (words: string, ms = 800) => {
    await run(ms - 100, true);
    stt.say(words);
    await run(100, true);
    await run(1500);
  };
  /** The caller presses a key (Twilio's `dtmf` message). */
  const press = async (digit: string) => {
    socket.receive({
      event: 'dtmf',
      sequenceNumber: '99',
      streamSid: socket.streamSid,
      dtmf: { track: 'inbound_track', digit },
    });
    await flush();
  };
  /** What the agent has said so far (each text given to the voice). */
  const spoken = () => speech.spoken.join(' ');
  return {
    clock,
    socket,
    stt,
    speech,
    lines,
    control,
    session,
    outcome,
    run,
    say,
    press,
    spoken,
    isEnded: () => ended,
  };
}
