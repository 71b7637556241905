// The two channels of a call's recording (DESIGN "Voice agent: the exact
// contract": caller left, agent right, PCM16 8 kHz). The caller channel is
// the caller's frames in arrival order (the phone sends audio all the time,
// silence included); the agent channel puts each frame the sink sends at the
// call time it was sent, silence where the agent is quiet, never overlapping.
import { emptyWav, PIPELINE_SAMPLE_RATE } from '../../lib/audio.js';

class Int16Builder {
  private data = new Int16Array(PIPELINE_SAMPLE_RATE * 10);
  length = 0;
  /** Writes at `offset` (zero-filled up to it), growing as needed. */
  writeAt(offset: number, samples: Int16Array) {
    const end = offset + samples.length;
    if (end > this.data.length) {
      const grown = new Int16Array(Math.max(end, this.data.length * 2));
      grown.set(this.data.subarray(0, this.length));
      this.data = grown;
    }
    this.data.set(samples, offset);
    this.length = Math.max(this.length, end);
  }
  /** The first `length` samples, zero past what was written: a view when the store is long enough (it is zero-filled past `length`). */
  view(length: number) {
    if (length <= this.data.length) return this.data.subarray(0, length);
    const out = new Int16Array(length);
    out.set(this.data.subarray(0, this.length));
    return out;
  }
}

export interface RecordingChannels {
  caller: Int16Array;
  agent: Int16Array;
}

export class CallRecording {
  private caller = new Int16Builder();
  private agent = new Int16Builder();
  /** Stops growing past this (a runaway call cannot eat the memory): samples beyond are dropped. */
  private readonly maxSamples: number;

  constructor(
    private readonly startMs: number,
    maxSeconds = 3600,
  ) {
    this.maxSamples = maxSeconds * PIPELINE_SAMPLE_RATE;
  }

  writeCaller(frame: Int16Array) {
    if (this.caller.length + frame.length <= this.maxSamples) this.caller.writeAt(this.caller.length, frame);
  }

  /** An agent frame sent at call time `atMs`: placed there, or right after the previous agent frame if that is later. */
  writeAgent(frame: Int16Array, atMs: number) {
    const at = Math.max(0, Math.round(((atMs - this.startMs) * PIPELINE_SAMPLE_RATE) / 1000));
    const offset = Math.max(at, this.agent.length);
    if (offset + frame.length <= this.maxSamples) this.agent.writeAt(offset, frame);
  }

  /** Both channels, padded with silence to the same length (views of the call's own samples: a call's end copies its audio once, into the WAV). */
  channels(): RecordingChannels {
    const length = Math.max(this.caller.length, this.agent.length);
    return { caller: this.caller.view(length), agent: this.agent.view(length) };
  }
}

/** A two-channel WAV (caller left, agent right) of a call's recording. */
export function recordingWav({ caller, agent }: RecordingChannels): Buffer {
  const length = Math.max(caller.length, agent.length);
  // Interleaved straight into the file's data (zero-filled: a channel shorter than the other ends in silence).
  const { file, data: interleaved } = emptyWav(length * 2, PIPELINE_SAMPLE_RATE, 2);
  for (let i = 0, n = caller.length; i < n; i++) interleaved[i * 2] = caller[i]!;
  for (let i = 0, n = agent.length; i < n; i++) interleaved[i * 2 + 1] = agent[i]!;
  return file;
}
