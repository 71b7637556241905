// The sandbox carrier (DESIGN.md "Sandbox carrier"): live-call control of the
// sandbox telephony provider that behaves as Twilio does. `placeCall` answers
// a `CA…` sid at once; then, in the background, the call's signed status
// callbacks go to its statusCallbackUrl (initiated, ringing, in-progress; at
// the end completed with CallDuration; a number ending in 0000 rings and is
// not answered), and once answered a WebSocket opens to the `<Stream url>` of
// the TwiML (over loopback: PUBLIC_URL is this server) speaking Twilio Media
// Streams. A simulated caller speaks its script there as real 8 kHz μ-law at
// real pace (flite, or espeak-ng), sending silence between lines as a phone
// does; it waits for the agent's reply (agent audio, then a pause) before its
// next line, echoes each `mark` once the audio before it has played (at once
// on `clear`, as Twilio does), barges in once per call (its next line over
// an agent answer, 1 s into it), and hangs up after its last line
// (`stop`, close). A redirect to `<Dial>` or `<Hangup/>`, or a hang-up, ends
// the simulated call with the completed callback.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { FRAME_SAMPLES_8K, pcmToMulaw } from '../../lib/audio.js';
import type { CallControl, PlaceCallRequest, SimulatedCaller } from './interface.js';

/** The caller's lines of an outbound sandbox call, in order (DESIGN.md). */
export const DEFAULT_CALLER_SCRIPT: readonly string[] = [
  'Hello, who is this?',
  'Can you tell me your opening hours please?',
  'I would like to book a meeting for next Tuesday.',
  'No thank you, goodbye.',
];

/** The caller's voice: PCM16 mono 8 kHz per line (OfflineCallerVoice). */
export interface CallerVoice {
  speak(text: string, signal: AbortSignal): Promise<Int16Array>;
}

export interface SandboxCallOptions {
  /** Pause between status callbacks (the sandbox's callbackDelayMs). */
  callbackDelayMs: number;
  /** POSTs one signed status callback (retried by the caller); false when it was not delivered. */
  post(url: string, params: Record<string, string>): Promise<boolean>;
  /** The caller's voice, or null when no synthesiser is installed (the caller then only sends silence and hangs up). */
  voice(): CallerVoice | null;
  /** The caller's lines (default DEFAULT_CALLER_SCRIPT). */
  script?: readonly string[];
  /** The agent quiet this long after speaking: its turn is over (default 1500 ms). */
  replyPauseMs?: number;
  /** Longest wait for the agent to begin answering before the caller goes on (default 12 s). */
  replyTimeoutMs?: number;
}

const FRAME_MS = 20;
const SILENCE = Buffer.from(pcmToMulaw(new Int16Array(FRAME_SAMPLES_8K))).toString('base64');
/** The agent must have spoken this long into an answer before the caller talks over it. */
const BARGE_IN_AFTER_MS = 1000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());

/** `<Stream url="…">` and its `<Parameter>`s from TwiML the service wrote (XML-escaped values). */
export function parseStreamTwiml(twiml: string): { url: string; parameters: Record<string, string> } | null {
  const unescape = (v: string) => v.replace(/&(lt|gt|amp|apos|quot);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' })[e]!);
  const stream = /<Stream\s+url="([^"]+)"/.exec(twiml);
  if (!stream) return null;
  const parameters: Record<string, string> = {};
  for (const m of twiml.matchAll(/<Parameter\s+name="([^"]*)"\s+value="([^"]*)"\s*\/>/g)) parameters[unescape(m[1]!)] = unescape(m[2]!);
  return { url: unescape(stream[1]!), parameters };
}

class SimulatedCall implements SimulatedCaller {
  readonly lines: readonly string[];
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
  private readonly pendingMarks = new Map<NodeJS.Timeout, string>();
  private bargedIn = false;
  private endStarted = false;
  private dropped = false;
  private finished!: () => void;
  /** Resolves once the call has ended and its last callback was sent. */
  readonly done = new Promise<void>((resolve) => (this.finished = resolve));

  constructor(
    readonly sid: string,
    private readonly request: PlaceCallRequest,
    private readonly options: SandboxCallOptions,
    private readonly onEnd: () => void,
  ) {
    this.lines = options.script ?? DEFAULT_CALLER_SCRIPT;
  }

  spoken(): readonly string[] {
    return this.spokenLines;
  }

  private status(status: string, extra: Record<string, string> = {}) {
    const { request } = this;
    return this.options.post(request.statusCallbackUrl, {
      AccountSid: 'ACsandbox',
      ApiVersion: '2010-04-01',
      CallSid: this.sid,
      CallStatus: status,
      Direction: 'outbound-api',
      From: request.from,
      To: request.to,
      ...extra,
    });
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
      this.answeredAt = Date.now();
      await this.status('in-progress');
      const stream = parseStreamTwiml(this.request.twiml);
      if (!stream || this.ended) return this.end();
      await this.connect(stream.url, stream.parameters);
      void this.pump();
      await this.converse();
      await this.end();
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
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ ...message, sequenceNumber: String(this.seq++) }));
  }

  private onMessage(raw: string) {
    let message: { event?: string; mark?: { name?: string } };
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    const now = Date.now();
    if (message.event === 'media') {
      this.agentFrames++;
      this.playedUntil = Math.max(now, this.playedUntil) + FRAME_MS;
    } else if (message.event === 'mark' && message.mark?.name) {
      // Echoed once the audio sent before it has played.
      const name = message.mark.name;
      const timer = setTimeout(() => {
        this.pendingMarks.delete(timer);
        this.echoMark(name);
      }, Math.max(0, this.playedUntil - now));
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

  /** One 20 ms media message every 20 ms of wall time: the caller's speech, else silence. */
  private async pump() {
    const started = Date.now();
    for (let chunk = 1; !this.ended && this.ws?.readyState === WebSocket.OPEN; chunk++) {
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
      this.send({ event: 'media', streamSid: this.streamSid, media: { track: 'inbound', chunk: String(chunk), timestamp: String(chunk * FRAME_MS), payload } });
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
    // Each line is synthesised while the one before plays, so a barge-in starts at once.
    const speak = (i: number) => (i < this.lines.length ? voice.speak(this.lines[i]!, this.abort.signal) : Promise.resolve(null));
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
      // The answer is what the agent sends after the line.
      const last = i === this.lines.length - 1;
      const mayBargeIn = !this.bargedIn && !last && i > 0;
      if (await this.agentTurn(this.agentFrames, mayBargeIn)) this.bargedIn = true;
    }
  }

  /** Hangs up (once): `stop`, close, then the completed callback with the call's length (canceled before it was answered). */
  async end(): Promise<void> {
    if (this.endStarted) return;
    this.endStarted = true;
    this.ended = true;
    this.abort.abort();
    for (const timer of this.pendingMarks.keys()) clearTimeout(timer);
    this.pendingMarks.clear();
    const ws = this.ws;
    this.ws = null;
    if (ws?.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ event: 'stop', sequenceNumber: String(this.seq++), streamSid: this.streamSid, stop: { accountSid: 'ACsandbox', callSid: this.sid } }));
      ws.close(1000);
    } else ws?.terminate();
    this.onEnd();
    if (this.dropped) return;
    if (this.answeredAt) await this.status('completed', { CallDuration: String(Math.max(0, Math.round((Date.now() - this.answeredAt) / 1000))) });
    else await this.status('canceled');
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
    const call = new SimulatedCall(sid, request, this.options, () => this.calls.delete(sid));
    this.calls.set(sid, call);
    void call.run();
    return { callSid: sid };
  }

  /** `<Dial>` (a transfer) or `<Hangup/>`: either way the simulated caller's side of the call ends. */
  async redirectCall(callSid: string, _twiml?: string): Promise<void> {
    await this.calls.get(callSid)?.end();
  }

  async hangUpCall(callSid: string): Promise<void> {
    await this.calls.get(callSid)?.end();
  }

  /** The simulated caller of a call under way (the runner passes its lines to the recogniser). */
  caller(callSid: string): SimulatedCaller | null {
    return this.calls.get(callSid) ?? null;
  }

  /** Calls under way (tests wait on them). */
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
