// A web call in a browser: the microphone in (getUserMedia, echo
// cancellation on, resampled to the call's 16 kHz PCM16 and sent in 20 ms
// frames), the agent through the speakers (Web Audio, played back to back),
// marks acknowledged when the audio before them has actually played, and
// `clear` honoured by stopping playback at once.
//
//   const started = await client.calls.startWeb({ agentId });
//   const call = await startBrowserCall(started, { onTranscript: (l) => show(l) });
//   hangUpButton.onclick = () => call.hangUp();
//   const { reason } = await call.ended;
//
// Capture uses a ScriptProcessorNode: unlike an AudioWorklet it needs no
// module file, so it works under a Content-Security-Policy whose script-src
// allows only the page's own scripts (the console's); it runs on the main
// thread, which is fine for 16 kHz speech.
import { WebCallConnection, type WebCallEnd, type WebCallStarted, type WebSocketFactory } from './web-call.js';

export interface BrowserCallOptions {
  /** A microphone stream of your own (default: getUserMedia with echo cancellation and noise suppression). */
  stream?: MediaStream;
  /** An AudioContext of your own (default: a new one, closed when the call ends). */
  audioContext?: AudioContext;
  /** The transcript as it is said (WebCallHandlers.transcript): an agent reply `final: false` as each sentence starts, then `final: true` as heard. */
  onTranscript?(line: { role: 'agent' | 'caller'; text: string; final: boolean; interrupted?: boolean }): void;
  onTool?(call: { name: string; arguments: unknown; result: unknown }): void;
  /** The agent was interrupted (barge-in): playback stopped. */
  onClear?(): void;
  /** true while agent audio is playing. */
  onSpeaking?(speaking: boolean): void;
  WebSocket?: WebSocketFactory;
}

export interface BrowserCall {
  readonly connection: WebCallConnection;
  /** Resolves when the call is over (the microphone is released and playback stopped by then). */
  readonly ended: Promise<WebCallEnd>;
  hangUp(): void;
  /** Mutes or unmutes the microphone (silence is sent while muted). */
  setMuted(muted: boolean): void;
}

/** Starts talking on a web call POST /api/calls/web answered; asks for the microphone unless `stream` is given. */
export async function startBrowserCall(
  started: Pick<WebCallStarted, 'url' | 'audio'>,
  options: BrowserCallOptions = {},
): Promise<BrowserCall> {
  const stream =
    options.stream ??
    (await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
    }));
  const context = options.audioContext ?? new AudioContext();
  if (context.state === 'suspended') await context.resume().catch(() => {});
  const rate = started.audio.sampleRate;
  const player = new Playback(context, rate, (speaking) => options.onSpeaking?.(speaking));
  const connection = new WebCallConnection(
    started,
    {
      audio: (samples) => player.enqueue(samples),
      mark: (name) => player.afterQueued(() => connection.ackMark(name)),
      clear: () => {
        player.stop();
        options.onClear?.();
      },
      transcript: (line) => options.onTranscript?.(line),
      tool: (call) => options.onTool?.(call),
    },
    { WebSocket: options.WebSocket },
  );
  await connection.opened;

  let muted = false;
  const source = context.createMediaStreamSource(stream);
  const capture = context.createScriptProcessor(2048, 1, 1);
  const resampler = new StreamResampler(context.sampleRate, rate);
  capture.onaudioprocess = (event) => {
    const input = event.inputBuffer.getChannelData(0);
    const pcm = resampler.push(input, muted);
    if (pcm.length) connection.sendAudio(pcm);
    // The processor's output stays silent: the caller must not hear themselves.
    event.outputBuffer.getChannelData(0).fill(0);
  };
  source.connect(capture);
  capture.connect(context.destination);

  const ended = connection.ended.then(async (end) => {
    capture.onaudioprocess = null;
    source.disconnect();
    capture.disconnect();
    player.stop();
    if (!options.stream) for (const track of stream.getTracks()) track.stop();
    if (!options.audioContext) await context.close().catch(() => {});
    return end;
  });
  return {
    connection,
    ended,
    hangUp: () => connection.hangUp(),
    setMuted: (value) => {
      muted = value;
    },
  };
}

/** Agent audio played back to back; callbacks when what was queued before them has played. */
class Playback {
  private nextAt = 0;
  private sources = new Set<AudioBufferSourceNode>();
  private timers = new Set<ReturnType<typeof setTimeout>>();
  private speaking = false;
  private quietTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly context: AudioContext,
    private readonly rate: number,
    private readonly onSpeaking: (speaking: boolean) => void,
  ) {}

  enqueue(samples: Int16Array): void {
    const buffer = this.context.createBuffer(1, samples.length, this.rate);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < samples.length; i++) channel[i] = samples[i]! / 32768;
    const node = this.context.createBufferSource();
    node.buffer = buffer;
    node.connect(this.context.destination);
    // Back to back while audio is queued; after the queue ran dry, a little slack so the next frames do not each start late.
    const now = this.context.currentTime;
    const startAt = this.nextAt >= now ? this.nextAt : now + 0.05;
    node.start(startAt);
    this.nextAt = startAt + buffer.duration;
    this.sources.add(node);
    node.onended = () => this.sources.delete(node);
    this.setSpeaking(true);
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => this.setSpeaking(false), this.msUntilPlayed() + 50);
  }

  /** Runs `fn` once everything queued so far has played. */
  afterQueued(fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, this.msUntilPlayed());
    this.timers.add(timer);
  }

  /** Barge-in or the end: silence now; marks of dropped audio are never acknowledged (the server ignores stale ones anyway). */
  stop(): void {
    for (const node of this.sources) {
      try {
        node.stop();
      } catch {
        // not started yet or already stopped
      }
    }
    this.sources.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.nextAt = 0;
    this.setSpeaking(false);
  }

  private msUntilPlayed(): number {
    return Math.max(0, (this.nextAt - this.context.currentTime) * 1000);
  }

  private setSpeaking(speaking: boolean): void {
    if (this.speaking === speaking) return;
    this.speaking = speaking;
    this.onSpeaking(speaking);
  }
}

/** Float samples at the context's rate → PCM16 at the call's rate, carrying the fractional position across blocks. */
class StreamResampler {
  private position = 0;
  private last = 0;
  private readonly step: number;

  constructor(fromRate: number, toRate: number) {
    this.step = fromRate / toRate;
  }

  push(input: Float32Array, silent: boolean): Int16Array {
    const out: number[] = [];
    // `position` is where the next output sample falls, in input samples from this block's start (may be negative: between the previous block's last sample and this one's first).
    while (this.position < input.length - 1) {
      const index = Math.floor(this.position);
      const fraction = this.position - index;
      const a = index < 0 ? this.last : input[index]!;
      const b = input[index + 1]!;
      const value = silent ? 0 : a + (b - a) * fraction;
      out.push(Math.max(-32768, Math.min(32767, Math.round(value * 32767))));
      this.position += this.step;
    }
    this.position -= input.length;
    this.last = input[input.length - 1] ?? 0;
    return Int16Array.from(out);
  }
}
