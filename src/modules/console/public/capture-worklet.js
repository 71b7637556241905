// AudioWorklet processor (loaded with audioWorklet.addModule, a same-origin
// file as the page's CSP requires): the microphone at the audio context's rate
// in, PCM16LE mono at the call's rate out, in whole frames (20 ms: 320 samples
// at 16 kHz), posted to the page as ArrayBuffers. Downsampling averages the
// input samples of each output sample's window (a box filter), enough against
// aliasing for speech recognition.
class Pcm16Capture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const { targetRate = 16000, frameMs = 20 } = options.processorOptions ?? {};
    this.step = sampleRate / targetRate;
    this.frameSamples = Math.round((targetRate * frameMs) / 1000);
    this.frame = new DataView(new ArrayBuffer(this.frameSamples * 2));
    this.filled = 0;
    this.position = 0;
    this.sum = 0;
    this.count = 0;
    this.last = 0;
    this.port.onmessage = (event) => {
      if (event.data === 'stop') this.stopped = true;
    };
  }

  emit(value) {
    const clamped = Math.max(-1, Math.min(1, value));
    this.frame.setInt16(this.filled * 2, clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff, true);
    if (++this.filled === this.frameSamples) {
      const buffer = this.frame.buffer;
      this.port.postMessage(buffer, [buffer]);
      this.frame = new DataView(new ArrayBuffer(this.frameSamples * 2));
      this.filled = 0;
    }
  }

  process(inputs) {
    if (this.stopped) return false;
    const channel = inputs[0]?.[0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      this.sum += channel[i];
      this.count++;
      this.position += 1;
      while (this.position >= this.step) {
        this.position -= this.step;
        if (this.count) this.last = this.sum / this.count;
        this.emit(this.last);
        this.sum = 0;
        this.count = 0;
      }
    }
    return true;
  }
}

registerProcessor('pcm16-capture', Pcm16Capture);
