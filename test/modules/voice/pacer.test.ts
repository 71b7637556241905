import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { runUrgentWork } from '../../../src/lib/urgent-work.js';
import { Pacer, pacerFor, URGENT_AHEAD_MS } from '../../../src/modules/voice/pacer.js';
import { AudioSink } from '../../../src/modules/voice/sink.js';
import { TwilioTransport } from '../../../src/modules/voice/transport.js';
import { FakeSocket, silence, tone } from './fakes.js';

async function call(clock: ManualClock, lateness?: number[]) {
  const socket = new FakeSocket();
  const transport = new TwilioTransport(socket);
  socket.start();
  await transport.started;
  const sink = new AudioSink(transport, clock, lateness ? { onFrameLateness: (ms) => lateness.push(ms) } : {});
  return { socket, sink };
}

function speak(sink: AudioSink, samples = 8000) {
  const segment = sink.startSegment();
  sink.write(segment, tone(samples));
  sink.endSegment(segment);
}

describe('Pacer (one pacing schedule for every call on a clock)', () => {
  it('runs at urgent-work points (long synchronous runs) what is due and what falls due within one frame period, nothing further', () => {
    const clock = new ManualClock(0);
    const pacer = new Pacer(clock);
    const ran: string[] = [];
    pacer.schedule((ahead) => ran.push(`a10 ahead ${ahead}`), 10);
    pacer.schedule(() => ran.push('b30'), 30);
    pacer.schedule(() => ran.push('c45'), 45);
    // The run may hold the loop past the next due time after the point: the point sends it now.
    runUrgentWork();
    expect(ran).toEqual([`a10 ahead ${URGENT_AHEAD_MS}`]);
    clock.set(15);
    runUrgentWork();
    expect(ran).toEqual([`a10 ahead ${URGENT_AHEAD_MS}`, 'b30']);
    // A plain poll (a caller frame, the timer) sends only what is due.
    clock.set(30);
    pacer.poll();
    expect(ran).toHaveLength(2);
    clock.set(45);
    pacer.poll();
    expect(ran).toEqual([`a10 ahead ${URGENT_AHEAD_MS}`, 'b30', 'c45']);
    // Nothing beyond the frame period.
    pacer.schedule(() => ran.push('d100'), 100);
    clock.set(79);
    runUrgentWork();
    expect(ran).toHaveLength(3);
    clock.set(80);
    runUrgentWork();
    expect(ran).toHaveLength(4);
  });

  it('runs wake-ups in time order, ties in the order asked, skips cancelled ones, and keeps one clock timer', () => {
    const clock = new ManualClock(0);
    const pacer = new Pacer(clock);
    const ran: string[] = [];
    pacer.schedule(() => ran.push('b30'), 30);
    pacer.schedule(() => ran.push('a10'), 10);
    const cancelled = pacer.schedule(() => ran.push('x20'), 20);
    pacer.schedule(() => ran.push('c30'), 30);
    cancelled.cancel();
    expect(clock.pendingTimers).toBe(1);
    clock.advance(10);
    expect(ran).toEqual(['a10']);
    clock.advance(20);
    expect(ran).toEqual(['a10', 'b30', 'c30']);
    expect(pacer.pending).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('poll() runs what is due without the timer, and nothing before its time', () => {
    const clock = new ManualClock(0);
    const pacer = new Pacer(clock);
    const ran: number[] = [];
    pacer.schedule(() => ran.push(clock.now()), 15);
    clock.set(14);
    pacer.poll();
    expect(ran).toEqual([]);
    clock.set(16); // the loop is busy: the timer has not fired
    pacer.poll();
    expect(ran).toEqual([16]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a wake-up that schedules an already due one runs it in the same pass', () => {
    const clock = new ManualClock(0);
    const pacer = new Pacer(clock);
    const ran: number[] = [];
    pacer.schedule(() => {
      ran.push(1);
      pacer.schedule(() => ran.push(2), 5);
    }, 10);
    clock.advance(10);
    expect(ran).toEqual([1, 2]);
  });

  it("one call's failing wake-up does not stop the others or reach the poll's caller", () => {
    const clock = new ManualClock(0);
    const errors: unknown[] = [];
    const pacer = new Pacer(clock, (error) => errors.push(error));
    const ran: string[] = [];
    pacer.schedule(() => {
      throw new Error('listener failed');
    }, 10);
    pacer.schedule(() => ran.push('other call'), 10);
    clock.set(10);
    expect(() => pacer.poll()).not.toThrow();
    expect(ran).toEqual(['other call']);
    expect(errors).toHaveLength(1);
  });
});

describe('AudioSinks sharing the pacer', () => {
  it('50 calls speaking at once keep one timer between them, and each still sends one frame per 20 ms', async () => {
    const clock = new ManualClock(0);
    const calls = await Promise.all(Array.from({ length: 50 }, () => call(clock)));
    for (const { sink } of calls) speak(sink);
    expect(clock.pendingTimers).toBe(1);
    expect(pacerFor(clock).pending).toBe(50);
    for (let i = 1; i <= 5; i++) {
      clock.advance(20);
      for (const { socket } of calls) expect(socket.count('media')).toBe(3 + i);
    }
    clock.advance(2000);
    for (const { socket } of calls) expect(socket.count('media')).toBe(50);
  });

  it("a caller frame of any call sends every call's due frames while the timer waits, and their lateness is still counted", async () => {
    const clock = new ManualClock(0);
    const lateness: number[] = [];
    const speaking = await call(clock, lateness);
    const other = await call(clock);
    speak(speaking.sink);
    expect(speaking.socket.count('media')).toBe(3); // the lead at once; the next frame is due at 20
    lateness.length = 0;
    clock.set(27); // the event loop is busy with sockets: the timer due at 20 has not fired
    other.socket.media(silence());
    expect(speaking.socket.count('media')).toBe(4);
    expect(lateness).toEqual([7]); // against its slot (60) less the lead (40): not hidden by the poll
  });

  it('an urgent-work point sends each call its frame due within the next 20 ms, as on time', async () => {
    const clock = new ManualClock(0);
    const lateness: number[] = [];
    const speaking = await call(clock, lateness);
    speak(speaking.sink);
    expect(speaking.socket.count('media')).toBe(3); // the lead at once; the next frame is due at 20
    lateness.length = 0;
    clock.set(5);
    runUrgentWork(); // a group-commit batch is about to write a call's recording
    expect(speaking.socket.count('media')).toBe(4);
    runUrgentWork(); // the next (due at 40) is beyond the period
    expect(speaking.socket.count('media')).toBe(4);
    expect(lateness).toEqual([0]);
    clock.set(40);
    runUrgentWork();
    expect(speaking.socket.count('media')).toBe(6); // due at 40 and, ahead, at 60
  });

  it("speech arriving for any call sends every call's due frames too", async () => {
    const clock = new ManualClock(0);
    const first = await call(clock);
    const second = await call(clock);
    speak(first.sink);
    clock.set(21);
    speak(second.sink);
    expect(first.socket.count('media')).toBe(4);
    expect(second.socket.count('media')).toBe(3);
  });
});
