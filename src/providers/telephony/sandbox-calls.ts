// The sandbox carrier (DESIGN.md "Sandbox carrier"): live-call control of the
// sandbox telephony provider that behaves as Twilio does. `placeCall` answers
// a `CA…` sid at once; then, in the background, the call's signed status
// callbacks go to its statusCallbackUrl (initiated, ringing, in-progress; at
// the end completed with CallDuration; a number ending in 0000 rings and is
// not answered, 0002 is busy, 0003 an answering machine, 0004 asks not to be
// called again: calleeScript), and once answered a WebSocket opens to the `<Stream url>` of
// the TwiML (over loopback: PUBLIC_URL is this server) speaking Twilio Media
// Streams. A simulated caller speaks its script there as real 8 kHz μ-law at
// real pace (flite, or espeak-ng), sending silence between lines as a phone
// does; it waits for the agent's reply (agent audio, then a pause) before its
// next line, echoes each `mark` once the audio before it has played (at once
// on `clear`, as Twilio does), barges in once per call (its next line over
// an agent answer, 1 s into it), and hangs up after its last line
// (`stop`, close). A redirect to `<Hangup/>`, or a hang-up, ends the
// simulated call with the completed callback. A redirect to `<Dial>` (a
// transfer) acts as Twilio does: the media stream stops, the number dialled
// answers and talks `transferLegMs` (cut at the `<Dial timeLimit>`), then the
// dialled leg's `completed` with its CallDuration and ParentCallSid goes,
// signed, to the `<Number statusCallback>`, and the call ends with it (its
// own completed callback counts the whole call).
//
// With `machineDetectionUrl` (asynchronous AMD) the verdict is POSTed there,
// signed like the others: `human` once the caller has said its first line;
// the `voicemail` script is an answering machine instead, which plays its
// greeting at once, then a beep, then sends `machine_end_beep` and records
// until the agent hangs up.
//
// `ring` is a call the other way, as Twilio carries a call from a phone to
// one of the service's numbers: the number's voice webhook is POSTed
// (signed, Direction=inbound) and its TwiML followed: `<Connect><Stream>`
// opens the media stream with its parameters and the caller talks as above;
// anything else (a refusal: `<Say>`, `<Hangup/>`) ends the call. Twilio sends an
// inbound call no status callbacks unless the number asks: ours do not.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { FRAME_SAMPLES_8K, mulawToPcm, pcmToMulaw } from '../../lib/audio.js';
import { DtmfDetector } from '../../lib/dtmf.js';
import type {
  CallControl,
  DialLeg,
  PlaceCallRequest,
  RingRequest,
  SandboxScript,
  SimulatedCaller,
} from './interface.js';
import { dialTwiml, hangUpTwiml } from './twiml.js';

/** The caller's lines of an outbound sandbox call, in order (DESIGN.md). */
export const DEFAULT_CALLER_SCRIPT: readonly string[] = [
  'Hello, who is this?',
  'Can you tell me your opening hours please?',
  'I would like to book a meeting for next Tuesday.',
  'No thank you, goodbye.',
];

/** What the answering machine of the `voicemail` script says before its beep. */
export const VOICEMAIL_GREETING =
  'Hello, you have reached the voicemail of this number. Please leave a message after the beep.';

/** What the opt-out callee (a number ending in 0004) says (DESIGN.md "Campaigns"). */
export const OPT_OUT_LINE = 'Please stop calling me.';

/**
 * The sandbox callees of DESIGN.md "Campaigns", as Twilio's magic numbers
 * (four-digit endings, so a random test number rarely hits one): 0000 rings
 * out and 0002 is busy (run() plays those), 0003 is an answering machine and
 * 0004 asks not to be called again. Null: the call's own script decides.
 */
export function calleeScript(to: string): SandboxScript | null {
  if (to.endsWith('0003')) return 'voicemail';
  if (to.endsWith('0004')) return [OPT_OUT_LINE];
  return null;
}

/** The caller's lines of a script. */
export function scriptLines(script: SandboxScript): readonly string[] {
  if (script === 'voicemail') return [VOICEMAIL_GREETING];
  if (script === 'default') return DEFAULT_CALLER_SCRIPT;
  return script;
}

/** The caller's voice: PCM16 mono 8 kHz per line (OfflineCallerVoice). */
export interface CallerVoice {
  speak(text: string, signal: AbortSignal): Promise<Int16Array>;
}

export interface SandboxCallOptions {
  /** Pause between status callbacks (the sandbox's callbackDelayMs). */
  callbackDelayMs: number;
  /** POSTs one signed status callback (retried by the caller); false when it was not delivered. */
  post(url: string, params: Record<string, string>): Promise<boolean>;
  /** POSTs one signed webhook once (a number's voice webhook) → its status and body; null when it was not reached. */
  request(url: string, params: Record<string, string>): Promise<{ status: number; body: string } | null>;
  /** The caller's voice, or null when no synthesiser is installed (the caller then only sends silence and hangs up). */
  voice(): CallerVoice | null;
  /** The caller's script when a call names none (default: `default`, DEFAULT_CALLER_SCRIPT). */
  script?: SandboxScript;
  /** The agent quiet this long after speaking: its turn is over (default 1500 ms). */
  replyPauseMs?: number;
  /** Longest wait for the agent to begin answering before the caller goes on (default 12 s). */
  replyTimeoutMs?: number;
  /** How long the person a call is transferred to talks, before `<Dial timeLimit>` cuts it (default 4 s). */
  transferLegMs?: number;
}

const FRAME_MS = 20;
/** Lag the caller's stream makes up at once at most: half the 2 s burst the server takes (real-time-allowance.ts). */
const MAX_CATCH_UP_MS = 1000;
const SILENCE = Buffer.from(pcmToMulaw(new Int16Array(FRAME_SAMPLES_8K))).toString('base64');
/** The agent must have spoken this long into an answer before the caller talks over it. */
const BARGE_IN_AFTER_MS = 1000;

/** The answering machine's beep: 1 kHz for half a second. */
const BEEP = Int16Array.from({ length: 4000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());

/** `<Stream url="…">` and its `<Parameter>`s from TwiML the service wrote (XML-escaped values). */
export function parseStreamTwiml(twiml: string): { url: string; parameters: Record<string, string> } | null {
  const unescape = (v: string) =>
    v.replace(/&(lt|gt|amp|apos|quot);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' })[e]!);
  const stream = /<Stream\s+url="([^"]+)"/.exec(twiml);
  if (!stream) return null;
  const parameters: Record<string, string> = {};
  for (const m of twiml.matchAll(/<Parameter\s+name="([^"]*)"\s+value="([^"]*)"\s*\/>/g))
    parameters[unescape(m[1]!)] = unescape(m[2]!);
  return { url: unescape(stream[1]!), parameters };
}

/** A transfer's `<Dial>` from TwiML the service wrote: its time limit, the number and the number's status callback. */
export function parseDialTwiml(
  twiml: string,
): { timeLimitSeconds: number; phone: string; statusCallbackUrl: string | null } | null {
  const unescape = (v: string) =>
    v.replace(/&(lt|gt|amp|apos|quot);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' })[e]!);
  const dial = /<Dial\b([^>]*)>([\s\S]*?)<\/Dial>/.exec(twiml);
  if (!dial) return null;
  // Twilio's default (and largest) time limit: four hours.
  const timeLimit = Number(/\btimeLimit="(\d+)"/.exec(dial[1]!)?.[1] ?? 14_400);
  const number = /<Number\b([^>]*)>([^<]*)<\/Number>/.exec(dial[2]!);
  const phone = unescape((number ? number[2]! : dial[2]!).trim());
  const callback = number ? /\bstatusCallback="([^"]*)"/.exec(number[1]!) : null;
  return { timeLimitSeconds: timeLimit, phone, statusCallbackUrl: callback ? unescape(callback[1]!) : null };
}

/** One leg as the carrier sees it: an outbound call it places, or a call it makes to one of the service's numbers. */
interface CallLeg {
  direction: 'outbound-api' | 'inbound';
  from: string;
  to: string;
  /** Outbound: the TwiML of the call; inbound: fetched from the voice webhook. */
  twiml?: string;
  statusCallbackUrl?: string;
  machineDetectionUrl?: string;
  script?: SandboxScript;
}

class SimulatedCall implements SimulatedCaller {
  readonly lines: readonly string[];
  /** The `voicemail` script: an answering machine answers. */
  private readonly machine: boolean;
  private readonly spokenLines: string[] = [];
  private ws: WebSocket | null = null;
  private readonly streamSid = `MZ${randomBytes(16).toString('hex')}`;
  private readonly abort = new AbortController();
  private ended = false;
  private answeredAt = 0;
  private seq = 1;
  /** Caller audio waiting to be sent, and how far it went. */
  private outgoing: { pcm: Int16Array; offset: number; done: () => void } | null = null;
  /** When the agent audio received so far will have played. */
  private playedUntil = 0;
  private agentFrames = 0;
  /** The keys the agent's side played (a pathway's digits node), heard in its audio as a phone menu would. */
  private readonly dtmf = new DtmfDetector();
  private readonly pendingMarks = new Map<NodeJS.Timeout, string>();
  private bargedIn = false;
  private endStarted = false;
  private dropped = false;
  private finished!: () => void;
  /** Resolves once the call has ended and its last callback was sent. */
  readonly done = new Promise<void>((resolve) => (this.finished = resolve));

  constructor(
    readonly sid: string,
    private readonly request: CallLeg,
    private readonly options: SandboxCallOptions,
    private readonly onEnd: () => void,
  ) {
    const script =
      (request.direction === 'outbound-api' ? calleeScript(request.to) : null) ??
      request.script ??
      options.script ??
      'default';
    this.machine = script === 'voicemail';
    this.lines = scriptLines(script);
  }

  spoken(): readonly string[] {
    return this.spokenLines;
  }

  heardDigits(): string {
    return this.dtmf.heard.join('');
  }

  private params(extra: Record<string, string>): Record<string, string> {
    const { request } = this;
    return {
      AccountSid: 'ACsandbox',
      ApiVersion: '2010-04-01',
      CallSid: this.sid,
      Direction: request.direction,
      From: request.from,
      To: request.to,
      ...extra,
    };
  }

  /** A status callback, when the call has a statusCallbackUrl (inbound calls have none). */
  private async status(status: string, extra: Record<string, string> = {}): Promise<boolean> {
    if (!this.request.statusCallbackUrl) return true;
    return this.options.post(this.request.statusCallbackUrl, this.params({ CallStatus: status, ...extra }));
  }

  /** Twilio's asynchronous AMD verdict, when the call asked for one. */
  private machineVerdict(answeredBy: string) {
    const url = this.request.machineDetectionUrl;
    if (!url || this.ended) return;
    void this.options.post(url, {
      AccountSid: 'ACsandbox',
      CallSid: this.sid,
      AnsweredBy: answeredBy,
      MachineDetectionDuration: String(Math.max(0, Date.now() - this.answeredAt)),
    });
  }

  /**
   * Inbound: POSTs the number's voice webhook as Twilio does when a call
   * comes in; true once it answered with TwiML, which is then followed in
   * the background (false: not reached or refused; the call is over).
   */
  async ring(voiceUrl: string): Promise<boolean> {
    const answer = await this.options.request(
      voiceUrl,
      this.params({ CallStatus: 'ringing', Caller: this.request.from, Called: this.request.to }),
    );
    if (answer?.status !== 200 || this.ended) {
      this.ended = true;
      this.endStarted = true;
      this.onEnd();
      this.finished();
      return false;
    }
    void this.follow(answer.body);
    return true;
  }

  /** Follows an inbound call's TwiML: its stream, or its `<Say>` sentences and the hang-up. */
  private async follow(twiml: string): Promise<void> {
    try {
      const stream = parseStreamTwiml(twiml);
      // Anything else (a refusal: `<Say>` then `<Hangup/>`) is spoken to the caller, and the call is over.
      if (!stream) return await this.end();
      this.answeredAt = Date.now();
      await this.talk(stream);
    } catch {
      await this.end();
    } finally {
      this.finished();
    }
  }

  /** Answered: opens the media stream the TwiML names, and the simulated caller talks until the call ends. */
  private async talk(stream: NonNullable<ReturnType<typeof parseStreamTwiml>>): Promise<void> {
    await this.connect(stream.url, stream.parameters);
    void this.pump();
    await this.converse();
    await this.end();
  }

  async run(): Promise<void> {
    const delay = this.options.callbackDelayMs;
    try {
      await this.status('initiated');
      await sleep(delay);
      if (this.ended) return this.end();
      await this.status('ringing');
      await sleep(delay);
      if (this.ended) return this.end();
      if (this.request.to.endsWith('0000')) {
        // Rings out: nobody answers.
        await sleep(delay * 2);
        this.ended = true;
        this.endStarted = true;
        this.onEnd();
        await this.status('no-answer', { CallDuration: '0' });
        return;
      }
      if (this.request.to.endsWith('0002')) {
        // Busy: the line is engaged, nobody answers.
        this.ended = true;
        this.endStarted = true;
        this.onEnd();
        await this.status('busy', { CallDuration: '0' });
        return;
      }
      this.answeredAt = Date.now();
      await this.status('in-progress');
      const stream = parseStreamTwiml(this.request.twiml ?? '');
      if (!stream || this.ended) return this.end();
      await this.talk(stream);
    } catch {
      await this.end();
    } finally {
      this.finished();
    }
  }

  private async connect(url: string, parameters: Record<string, string>) {
    const ws = new WebSocket(url);
    this.ws = ws;
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.on('error', () => {});
    ws.on('close', () => void this.end());
    ws.on('message', (data) => this.onMessage(String(data)));
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send({
      event: 'start',
      streamSid: this.streamSid,
      start: {
        streamSid: this.streamSid,
        accountSid: 'ACsandbox',
        callSid: this.sid,
        tracks: ['inbound'],
        customParameters: parameters,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
  }

  private send(message: Record<string, unknown>) {
    if (this.ws?.readyState === WebSocket.OPEN)
      this.ws.send(JSON.stringify({ ...message, sequenceNumber: String(this.seq++) }));
  }

  private onMessage(raw: string) {
    let message: { event?: string; mark?: { name?: string }; media?: { payload?: string } };
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    const now = Date.now();
    if (message.event === 'media') {
      this.agentFrames++;
      if (typeof message.media?.payload === 'string')
        this.dtmf.push(mulawToPcm(Buffer.from(message.media.payload, 'base64')));
      this.playedUntil = Math.max(now, this.playedUntil) + FRAME_MS;
    } else if (message.event === 'mark' && message.mark?.name) {
      // Echoed once the audio sent before it has played.
      const name = message.mark.name;
      const timer = setTimeout(
        () => {
          this.pendingMarks.delete(timer);
          this.echoMark(name);
        },
        Math.max(0, this.playedUntil - now),
      );
      this.pendingMarks.set(timer, name);
    } else if (message.event === 'clear') {
      // The buffered audio is dropped and its marks come back at once.
      this.playedUntil = now;
      for (const [timer, name] of this.pendingMarks) {
        clearTimeout(timer);
        this.echoMark(name);
      }
      this.pendingMarks.clear();
    }
  }

  private echoMark(name: string) {
    this.send({ event: 'mark', streamSid: this.streamSid, mark: { name } });
  }

  /**
   * One 20 ms media message every 20 ms of wall time: the caller's speech,
   * else silence. Behind by more than MAX_CATCH_UP_MS (a loaded process whose
   * timers ran late), it catches up only that much and goes on from there, as
   * a phone network's jitter buffer does: sending the whole lag at once is
   * what a flooding far end does (the server shut 10 of 10 sandbox calls out
   * with audio_flood under load, 7 s ahead).
   */
  private async pump() {
    let started = Date.now();
    for (let chunk = 1; !this.ended && this.ws?.readyState === WebSocket.OPEN; chunk++) {
      const behind = Date.now() - (started + (chunk - 1) * FRAME_MS);
      if (behind > MAX_CATCH_UP_MS) started += behind - MAX_CATCH_UP_MS;
      let payload = SILENCE;
      const out = this.outgoing;
      if (out) {
        const frame = new Int16Array(FRAME_SAMPLES_8K);
        frame.set(out.pcm.subarray(out.offset, out.offset + FRAME_SAMPLES_8K));
        out.offset += FRAME_SAMPLES_8K;
        payload = Buffer.from(pcmToMulaw(frame)).toString('base64');
        if (out.offset >= out.pcm.length) {
          this.outgoing = null;
          out.done();
        }
      }
      this.send({
        event: 'media',
        streamSid: this.streamSid,
        media: { track: 'inbound', chunk: String(chunk), timestamp: String(chunk * FRAME_MS), payload },
      });
      await sleep(started + chunk * FRAME_MS - Date.now());
    }
    const out = this.outgoing;
    this.outgoing = null;
    out?.done();
  }

  private agentSpeaking(now = Date.now()) {
    return this.playedUntil > now;
  }

  /**
   * Waits for the agent's turn: new audio after `framesBefore`, then `replyPauseMs` of quiet.
   * `bargeIn`: returns early (true) once the agent has spoken BARGE_IN_AFTER_MS into its answer.
   */
  private async agentTurn(framesBefore: number, bargeIn: boolean): Promise<boolean> {
    const pause = this.options.replyPauseMs ?? 1500;
    const deadline = Date.now() + (this.options.replyTimeoutMs ?? 12_000);
    let speakingSince: number | null = null;
    while (!this.ended) {
      const now = Date.now();
      const heard = this.agentFrames > framesBefore;
      if (!heard && now > deadline) return false;
      if (heard) {
        // Speaking, with gaps under 300 ms (frames that arrive late on a busy machine) not counted as pauses.
        if (this.agentSpeaking(now)) speakingSince ??= now;
        else if (now - this.playedUntil > 300) speakingSince = null;
        if (bargeIn && speakingSince !== null && now - speakingSince >= BARGE_IN_AFTER_MS) return true;
        if (now - this.playedUntil >= pause) return false;
      }
      await sleep(50);
    }
    return false;
  }

  /** Sends one line's audio; resolves once its last frame is out. */
  private async say(line: string, pcm: Int16Array): Promise<void> {
    if (this.ended) return;
    this.spokenLines.push(line);
    await this.play(pcm);
  }

  /** Sends audio; resolves once its last frame is out. */
  private async play(pcm: Int16Array): Promise<void> {
    if (this.ended) return;
    await new Promise<void>((resolve) => {
      this.outgoing = { pcm, offset: 0, done: resolve };
      this.abort.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  private async converse() {
    const voice = this.options.voice();
    if (!voice) {
      // Nothing to speak with: the call is answered, stays silent a while, and hangs up.
      await this.agentTurn(0, false);
      return;
    }
    if (this.machine) return this.answeringMachine(voice);
    // Each line is synthesised while the one before plays, so a barge-in starts at once.
    const speak = (i: number) =>
      i < this.lines.length ? voice.speak(this.lines[i]!, this.abort.signal) : Promise.resolve(null);
    let next = speak(0);
    next.catch(() => {});
    // The greeting (or, without one, the timeout) first.
    await this.agentTurn(0, false);
    for (let i = 0; i < this.lines.length && !this.ended; i++) {
      const pcm = await next;
      next = speak(i + 1);
      next.catch(() => {});
      if (!pcm) break;
      await this.say(this.lines[i]!, pcm);
      // A person spoke first and stopped: Twilio's asynchronous detection says `human`.
      if (i === 0) this.machineVerdict('human');
      // The answer is what the agent sends after the line.
      const last = i === this.lines.length - 1;
      const mayBargeIn = !this.bargedIn && !last && i > 0;
      if (await this.agentTurn(this.agentFrames, mayBargeIn)) this.bargedIn = true;
    }
  }

  /**
   * An answering machine: its greeting at once (over the agent's, as a
   * machine does), a beep, the `machine_end_beep` verdict, then it records
   * whatever the agent says until the agent hangs up (or the reply timeout
   * passes twice without that).
   */
  private async answeringMachine(voice: CallerVoice) {
    const greeting = await voice.speak(this.lines[0]!, this.abort.signal);
    await this.say(this.lines[0]!, greeting);
    await this.play(BEEP);
    this.machineVerdict('machine_end_beep');
    await this.agentTurn(this.agentFrames, false);
    const deadline = Date.now() + (this.options.replyTimeoutMs ?? 12_000);
    while (!this.ended && Date.now() < deadline) await sleep(50);
  }

  /** Stops the call's stream once (Twilio's `stop`, then close): false when its end had already begun. */
  private stopStream(): boolean {
    if (this.endStarted) return false;
    this.endStarted = true;
    this.ended = true;
    this.abort.abort();
    for (const timer of this.pendingMarks.keys()) clearTimeout(timer);
    this.pendingMarks.clear();
    const ws = this.ws;
    this.ws = null;
    if (ws?.readyState === WebSocket.OPEN) {
      ws.send(
        JSON.stringify({
          event: 'stop',
          sequenceNumber: String(this.seq++),
          streamSid: this.streamSid,
          stop: { accountSid: 'ACsandbox', callSid: this.sid },
        }),
      );
      ws.close(1000);
    } else ws?.terminate();
    return true;
  }

  /** Hangs up (once): `stop`, close, then the completed callback with the call's length (canceled before it was answered). */
  async end(): Promise<void> {
    if (!this.stopStream()) return;
    this.onEnd();
    if (this.dropped) return;
    if (this.answeredAt)
      await this.status('completed', {
        CallDuration: String(Math.max(0, Math.round((Date.now() - this.answeredAt) / 1000))),
      });
    else await this.status('canceled');
  }

  /**
   * A redirect to `<Dial>`: the stream stops (Twilio stops it and moves to
   * the new TwiML), the person dialled talks, then the dialled leg's signed
   * `completed` (CallDuration from its answer, at most the time limit) and,
   * as nothing follows the `<Dial>`, the call's own. Resolves once the
   * stream has stopped; the leg goes on in the background.
   */
  async transfer(dial: NonNullable<ReturnType<typeof parseDialTwiml>>): Promise<void> {
    if (!this.stopStream()) return;
    void this.dialledLeg(dial);
  }

  private async dialledLeg(dial: NonNullable<ReturnType<typeof parseDialTwiml>>): Promise<void> {
    const talkMs = Math.min(this.options.transferLegMs ?? 4000, dial.timeLimitSeconds * 1000);
    await sleep(talkMs);
    this.onEnd();
    if (this.dropped) return;
    if (dial.statusCallbackUrl) {
      await this.options.post(dial.statusCallbackUrl, {
        AccountSid: 'ACsandbox',
        ApiVersion: '2010-04-01',
        CallSid: `CA${randomBytes(16).toString('hex')}`,
        ParentCallSid: this.sid,
        Direction: 'outbound-dial',
        From: this.request.from,
        To: dial.phone,
        CallStatus: 'completed',
        CallDuration: String(Math.min(dial.timeLimitSeconds, Math.round(talkMs / 1000))),
      });
    }
    if (this.answeredAt)
      await this.status('completed', {
        CallDuration: String(Math.max(0, Math.round((Date.now() - this.answeredAt) / 1000))),
      });
  }

  /** The app is closing: hang up without callbacks. */
  drop(): void {
    this.dropped = true;
    void this.end();
  }
}

/** Call control of the sandbox telephony provider: a simulated caller answers each call. */
export class SandboxCallControl implements CallControl {
  private readonly calls = new Map<string, SimulatedCall>();
  private stopped = false;

  constructor(private readonly options: SandboxCallOptions) {}

  async placeCall(request: PlaceCallRequest): Promise<{ callSid: string }> {
    const sid = `CA${randomBytes(16).toString('hex')}`;
    if (this.stopped) return { callSid: sid };
    const call = new SimulatedCall(sid, { ...request, direction: 'outbound-api' }, this.options, () =>
      this.calls.delete(sid),
    );
    this.calls.set(sid, call);
    void call.run();
    return { callSid: sid };
  }

  async ring(request: RingRequest): Promise<{ callSid: string; answered: boolean }> {
    const sid = `CA${randomBytes(16).toString('hex')}`;
    if (this.stopped) return { callSid: sid, answered: false };
    const call = new SimulatedCall(
      sid,
      {
        direction: 'inbound',
        from: request.from,
        to: request.to,
        ...(request.script ? { script: request.script } : {}),
      },
      this.options,
      () => this.calls.delete(sid),
    );
    this.calls.set(sid, call);
    return { callSid: sid, answered: await call.ring(request.voiceUrl) };
  }

  /** `<Dial>` (a transfer: the number dialled talks, then its leg's and the call's completed callbacks) or `<Hangup/>` (the call ends). */
  async redirectCall(callSid: string, twiml?: string): Promise<void> {
    const call = this.calls.get(callSid);
    const dial = twiml ? parseDialTwiml(twiml) : null;
    if (dial) await call?.transfer(dial);
    else await call?.end();
  }

  async hangUpCall(callSid: string): Promise<void> {
    await this.calls.get(callSid)?.end();
  }

  async endCall(callSid: string): Promise<void> {
    await this.redirectCall(callSid, hangUpTwiml()).catch(() => this.hangUpCall(callSid));
  }

  async transferCall(callSid: string, leg: DialLeg): Promise<void> {
    await this.redirectCall(callSid, dialTwiml(leg));
  }

  /** The simulated caller of a call under way (the runner passes its lines to the recogniser). */
  caller(callSid: string): SimulatedCaller | null {
    return this.calls.get(callSid) ?? null;
  }

  /** Calls under way, transferred ones until their dialled leg ends (tests wait on them). */
  get running(): number {
    return this.calls.size;
  }

  /** Ends every call under way (the app is closing). */
  stop(): void {
    this.stopped = true;
    for (const call of this.calls.values()) call.drop();
    this.calls.clear();
  }
}
