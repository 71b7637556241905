// A web call from the browser (DESIGN.md "Calls from a browser"): POST
// /api/calls/web, then the single-use WebSocket it names. The microphone goes
// out as PCM16LE frames (capture-worklet.js); the agent's PCM16LE comes back
// paced and is played through Web AudioContext, gaplessly, one buffer after the
// other. A `mark` from the server is answered once the audio sent before it has
// played, so the server keeps only what the caller heard; `clear` (barge-in)
// stops playback at once and forgets marks whose audio will never play.
import { api } from './common.js';

const WORKLET_URL = '/console/assets/capture-worklet.js';
/** Playback starts this far ahead after a gap, so the next paced chunk arrives before the first ends. */
const JITTER_LEAD_S = 0.08;

export class WebCall {
  /**
   * @param {object} handlers onState(state, detail), onTranscript({ role, text, final, interrupted }),
   *   onTool({ name, arguments, result }), onEnded(reason), onAudio(playedMs)
   */
  constructor(handlers) {
    this.handlers = handlers;
    this.state = 'idle';
    this.sessionId = null;
    this.playedMs = 0;
    this.receivedMs = 0;
    this.sources = new Set();
    this.marks = [];
    this.playhead = 0;
    this.endReason = null;
  }

  setState(state, detail) {
    this.state = state;
    this.handlers.onState?.(state, detail);
  }

  /** Opens the microphone, starts the call with `request` (the body of POST /api/calls/web) and connects. */
  async start(request) {
    this.setState('starting', 'Opening the microphone…');
    // Created inside the click that starts the call, so the browser lets it play.
    this.context = new AudioContext({ latencyHint: 'interactive' });
    await this.context.resume();
    try {
      this.microphone = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      });
    } catch (error) {
      await this.release();
      throw new Error(`the microphone is not available (${error.name}: ${error.message})`);
    }
    await this.context.audioWorklet.addModule(WORKLET_URL);

    this.setState('starting', 'Starting the call…');
    let answer;
    try {
      answer = (await api('/api/calls/web', { method: 'POST', body: request })).data;
    } catch (error) {
      await this.release();
      throw error;
    }
    const { audio } = answer;
    if (audio?.encoding !== 'pcm16le' || !Number.isInteger(audio.sampleRate) || !Number.isInteger(audio.frameMs)) {
      await this.release();
      throw new Error(`the service announced an audio format the console does not speak: ${JSON.stringify(audio)}`);
    }
    this.sessionId = answer.sessionId;
    this.sampleRate = audio.sampleRate;

    this.setState('connecting', 'Connecting…');
    const socket = new WebSocket(answer.url);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    socket.addEventListener('message', (event) => this.onMessage(event.data));
    socket.addEventListener('close', (event) => this.onClose(event));
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener('close', () => reject(new Error('the call could not connect')), { once: true });
    });

    const input = this.context.createMediaStreamSource(this.microphone);
    this.capture = new AudioWorkletNode(this.context, 'pcm16-capture', {
      processorOptions: { targetRate: audio.sampleRate, frameMs: audio.frameMs },
      numberOfOutputs: 1,
    });
    this.capture.port.onmessage = (event) => {
      if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(event.data);
    };
    input.connect(this.capture);
    // The worklet writes no output; connecting it keeps the graph pulling it in every browser.
    this.capture.connect(this.context.destination);
    this.input = input;
    // Marks are also checked on a timer: a source's `ended` may come late in a background tab.
    this.markTimer = setInterval(() => this.flushMarks(), 50);
    this.setState('live', 'On the call: speak to your agent.');
  }

  onMessage(data) {
    if (data instanceof ArrayBuffer) return this.play(data);
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    switch (message.type) {
      case 'mark':
        this.marks.push({ name: message.name, at: this.playhead });
        return this.flushMarks();
      case 'clear':
        return this.stopPlayback();
      case 'transcript':
        return this.handlers.onTranscript?.(message);
      case 'tool':
        return this.handlers.onTool?.(message);
      case 'ended':
        this.endReason = message.reason;
        return;
    }
  }

  /** Schedules one chunk of agent audio right after the previous one. */
  play(buffer) {
    const context = this.context;
    if (!context) return;
    const view = new DataView(buffer);
    const samples = new Float32Array(buffer.byteLength >> 1);
    for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true) / 0x8000;
    if (!samples.length) return;
    const chunk = context.createBuffer(1, samples.length, this.sampleRate);
    chunk.copyToChannel(samples, 0);
    const source = context.createBufferSource();
    source.buffer = chunk;
    source.connect(context.destination);
    const now = context.currentTime;
    if (this.playhead < now + 0.005) this.playhead = now + JITTER_LEAD_S;
    source.start(this.playhead);
    this.playhead += chunk.duration;
    this.receivedMs += chunk.duration * 1000;
    this.sources.add(source);
    source.addEventListener('ended', () => {
      if (!this.sources.delete(source)) return; // stopped by a clear: not heard
      this.playedMs += chunk.duration * 1000;
      this.handlers.onAudio?.(this.playedMs);
      this.flushMarks();
    });
  }

  /** Acknowledges, in order, every mark whose audio has played. */
  flushMarks() {
    if (!this.context) return;
    const now = this.context.currentTime;
    while (this.marks.length && this.marks[0].at <= now + 0.002) {
      const { name } = this.marks.shift();
      if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: 'mark', name }));
    }
  }

  /** Barge-in: silence now; marks of audio that will never play are not acknowledged. */
  stopPlayback() {
    const playing = [...this.sources];
    this.sources.clear();
    for (const source of playing) {
      try {
        source.stop();
      } catch {
        // not started yet
      }
    }
    this.marks = [];
    this.playhead = 0;
  }

  sendDigit(digit) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: 'dtmf', digit }));
  }

  /** Asks the service to end the call; it answers `ended` and closes the socket. */
  hangUp() {
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ type: 'hangup' }));
      this.setState('ending', 'Hanging up…');
      // The service closes; if it does not within 3 s, close from here.
      setTimeout(() => this.socket?.readyState === WebSocket.OPEN && this.socket.close(1000, 'hang up'), 3000);
    } else {
      void this.release();
    }
  }

  onClose(event) {
    const reason =
      this.endReason ??
      (event.code === 1008
        ? `refused: ${event.reason || 'the call token was not accepted'}`
        : event.reason || `connection closed (${event.code})`);
    void this.release().then(() => {
      this.setState('ended', `Call ended: ${reason}.`);
      this.handlers.onEnded?.(reason);
    });
  }

  /** Stops the microphone, playback and the audio context. */
  async release() {
    clearInterval(this.markTimer);
    this.stopPlayback();
    this.capture?.port.postMessage('stop');
    this.input?.disconnect();
    this.capture?.disconnect();
    for (const track of this.microphone?.getTracks() ?? []) track.stop();
    this.microphone = null;
    const context = this.context;
    this.context = null;
    if (context && context.state !== 'closed') await context.close().catch(() => {});
  }
}
