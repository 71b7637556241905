// The voice bench's callers, in their own process (as Twilio would be): each
// call connects to the stream URL of its TwiML with its token, waits for the
// agent's greeting to end, then speaks its lines (real μ-law speech, 20 ms
// frames at real pace, then silence), echoing every mark as Twilio does, and
// hangs up (`stop`). Arrival times are stamped here, so the server's latency
// is measured without the callers' own work on the server's event loop.
//
// Messages in: { type: 'lines', lines: [base64 PCM16 8 kHz] } → { type: 'ready' };
// { type: 'call', id, url, token, callSid, accountSid, turns } → later one
// { type: 'done', id, result: CallerResult } (or { type: 'done', id, error }).
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { FRAME_SAMPLES_8K, pcmToMulaw } from '../../src/lib/audio.js';

export interface CallerTurn {
  /** Milliseconds from the caller's last speech frame sent to the first agent media frame received after it; null: no answer. */
  replyMs: number | null;
}

export interface CallerResult {
  turns: CallerTurn[];
  /** Inter-arrival of agent media frames within one utterance (gap < 200 ms), in ms. */
  gaps: number[];
  /** How late each agent frame arrived against its 20 ms slot, counted from its utterance's first frame (ms; ≤ 0 is on time or early). */
  lateness: number[];
  agentFrames: number;
  /** Connect to stop, in ms. */
  durationMs: number;
}

interface CallJob {
  type: 'call';
  id: string;
  url: string;
  token: string;
  callSid: string;
  accountSid: string;
  turns: number;
}

/** Each line's 20 ms μ-law frames (speech, then 1,200 ms of silence), and how many of them are speech. */
let lines: Array<{ frames: Buffer[]; speechFrames: number }> = [];
const SILENCE_MS = 1200;
const QUIET_MS = 700;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Lag a caller makes up at once at most (a jitter buffer): more would be a burst the server takes for a flood. */
const MAX_CATCH_UP_MS = 1000;
/** The next frame's time, 20 ms on, never more than MAX_CATCH_UP_MS behind now. */
const paced = (next: number) => Math.max(next + 20, performance.now() - MAX_CATCH_UP_MS);

function framesOf(pcm: Int16Array): { frames: Buffer[]; speechFrames: number } {
  const speechFrames = Math.ceil(pcm.length / FRAME_SAMPLES_8K);
  const total = new Int16Array((speechFrames + SILENCE_MS / 20) * FRAME_SAMPLES_8K);
  total.set(pcm);
  const frames: Buffer[] = [];
  for (let i = 0; i < total.length; i += FRAME_SAMPLES_8K)
    frames.push(Buffer.from(pcmToMulaw(total.subarray(i, i + FRAME_SAMPLES_8K))));
  return { frames, speechFrames };
}

async function runCall(job: CallJob): Promise<CallerResult> {
  const ws = new WebSocket(job.url);
  const streamSid = `MZ${randomUUID().replace(/-/g, '')}`;
  let seq = 1;
  const send = (message: Record<string, unknown>) =>
    ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ ...message, sequenceNumber: String(seq++) }));
  let agentFrames = 0;
  let lastFrameAt = 0;
  let waitingSince: number | null = null;
  let reply: number | null = null;
  const gaps: number[] = [];
  const lateness: number[] = [];
  let utteranceStart = 0;
  let utteranceFrames = 0;
  ws.on('message', (data) => {
    const now = performance.now();
    const message = JSON.parse(String(data)) as { event: string; mark?: { name: string } };
    if (message.event === 'media') {
      agentFrames++;
      if (lastFrameAt && now - lastFrameAt < 200) {
        gaps.push(now - lastFrameAt);
        utteranceFrames++;
        lateness.push(now - (utteranceStart + utteranceFrames * 20));
      } else {
        utteranceStart = now;
        utteranceFrames = 0;
      }
      lastFrameAt = now;
      if (waitingSince !== null && reply === null) reply = now - waitingSince;
    } else if (message.event === 'mark') send({ event: 'mark', streamSid, mark: message.mark });
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const t0 = performance.now();
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
  send({
    event: 'start',
    streamSid,
    start: {
      streamSid,
      accountSid: job.accountSid,
      callSid: job.callSid,
      tracks: ['inbound'],
      customParameters: { token: job.token },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
  let chunk = 0;
  /** Silence is sent while waiting, as a phone line carries it. */
  const silence = Buffer.alloc(FRAME_SAMPLES_8K, 0xff);
  const frame = (payload: Buffer) => {
    chunk++;
    send({
      event: 'media',
      streamSid,
      media: {
        track: 'inbound',
        chunk: String(chunk),
        timestamp: String(chunk * 20),
        payload: payload.toString('base64'),
      },
    });
  };
  /** Sends silence at real pace until the agent has sent nothing for QUIET_MS (after it started, when `mustHear`). */
  const waitQuiet = async (mustHear: boolean, limitMs: number) => {
    const start = performance.now();
    const framesBefore = agentFrames;
    let next = performance.now();
    while (performance.now() - start < limitMs && ws.readyState === WebSocket.OPEN) {
      const heard = agentFrames > framesBefore;
      if ((heard || !mustHear) && performance.now() - Math.max(lastFrameAt, start) > QUIET_MS) return;
      frame(silence);
      next = paced(next);
      await sleep(Math.max(0, next - performance.now()));
    }
  };
  const turns: CallerTurn[] = [];
  await waitQuiet(true, 20_000); // the greeting
  for (let t = 0; t < job.turns && ws.readyState === WebSocket.OPEN; t++) {
    const line = lines[t % lines.length]!;
    reply = null;
    waitingSince = null;
    let next = performance.now();
    for (let i = 0; i < line.frames.length; i++) {
      frame(line.frames[i]!);
      if (i === line.speechFrames - 1) waitingSince = performance.now();
      next = paced(next);
      await sleep(Math.max(0, next - performance.now()));
    }
    await waitQuiet(true, 15_000);
    turns.push({ replyMs: reply === null ? null : Math.round(reply * 10) / 10 });
    waitingSince = null;
  }
  send({ event: 'stop', streamSid, stop: { accountSid: job.accountSid, callSid: job.callSid } });
  await Promise.race([closed, sleep(5000)]);
  const durationMs = performance.now() - t0;
  ws.terminate();
  return {
    turns,
    gaps: gaps.map((g) => Math.round(g * 10) / 10),
    lateness: lateness.map((g) => Math.round(g * 10) / 10),
    agentFrames,
    durationMs: Math.round(durationMs),
  };
}

process.on('message', (msg: { type: 'lines'; lines: string[] } | CallJob | { type: 'stop' }) => {
  if (msg.type === 'lines') {
    lines = msg.lines.map((b64) => {
      const buf = Buffer.from(b64, 'base64');
      return framesOf(new Int16Array(buf.buffer, buf.byteOffset, buf.length / 2));
    });
    process.send!({ type: 'ready' });
  } else if (msg.type === 'call') {
    runCall(msg).then(
      (result) => process.send!({ type: 'done', id: msg.id, result }),
      (err) => process.send!({ type: 'done', id: msg.id, error: String(err) }),
    );
  } else process.exit(0);
});
