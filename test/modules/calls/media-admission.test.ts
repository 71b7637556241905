// Admission of media sockets before their token is accepted, on an injected
// clock: caps per address and in all, the deadline, small and few messages,
// and sockets closed for a violation cut off after the grace.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import {
  DEFAULT_MEDIA_ADMISSION,
  MediaAdmission,
  type MediaSocket,
} from '../../../src/modules/voice-agent/media-admission.js';

type Listener = (...args: any[]) => void;

class FakeMediaSocket implements MediaSocket {
  closedWith: { code?: number; reason?: string } | null = null;
  paused = false;
  terminated = false;
  private listeners: Record<string, Listener[]> = { message: [], close: [] };
  send() {}
  close(code?: number, reason?: string) {
    this.closedWith ??= { code, reason };
  }
  pause() {
    this.paused = true;
  }
  terminate() {
    this.terminated = true;
    this.emit('close');
  }
  on(event: 'message' | 'close', listener: Listener) {
    this.listeners[event]!.push(listener);
    return this;
  }
  emit(event: 'message' | 'close', ...args: unknown[]) {
    for (const l of this.listeners[event]!) l(...args);
  }
}

const setup = (limits: Partial<typeof DEFAULT_MEDIA_ADMISSION> = {}) => {
  const clock = new ManualClock(0);
  return { clock, admission: new MediaAdmission({ ...DEFAULT_MEDIA_ADMISSION, ...limits }, clock) };
};

describe('MediaAdmission', () => {
  it('holds at most 8 sockets per address and 200 in all before their token; more are closed with 1013; a place is free again once the socket is accepted or gone', () => {
    const { admission } = setup({ perAddress: 3, total: 5 });
    const sockets = Array.from({ length: 4 }, () => new FakeMediaSocket());
    const passes = sockets.map((s) => admission.admit(s, '10.0.0.1'));
    expect(passes.map((p) => p !== null)).toEqual([true, true, true, false]);
    expect(sockets[3]!.closedWith?.code).toBe(1013);
    expect(admission.waitingFrom('10.0.0.1')).toBe(3);
    // Other addresses up to the cap in all.
    expect(admission.admit(new FakeMediaSocket(), '10.0.0.2')).not.toBeNull();
    expect(admission.admit(new FakeMediaSocket(), '10.0.0.3')).not.toBeNull();
    const overAll = new FakeMediaSocket();
    expect(admission.admit(overAll, '10.0.0.4')).toBeNull();
    expect(overAll.closedWith?.code).toBe(1013);
    expect(admission.refused).toBe(2);
    // Accepted: it leaves admission. Gone: its place is free.
    expect(passes[0]!.accepted()).toBe(true);
    sockets[1]!.emit('close');
    expect(admission.waitingFrom('10.0.0.1')).toBe(1);
    expect(admission.waiting).toBe(3);
    expect(admission.admit(new FakeMediaSocket(), '10.0.0.1')).not.toBeNull();
    // An accepted socket closing later frees nothing twice.
    sockets[0]!.emit('close');
    expect(admission.waiting).toBe(4);
  });

  it('closes a socket whose token is not accepted within the deadline (1008); an accepted one is left alone', () => {
    const { clock, admission } = setup();
    const late = new FakeMediaSocket();
    const onTime = new FakeMediaSocket();
    const latePass = admission.admit(late, 'a')!;
    const onTimePass = admission.admit(onTime, 'a')!;
    clock.advance(4999);
    expect(onTimePass.accepted()).toBe(true);
    clock.advance(1);
    expect(late.closedWith?.code).toBe(1008);
    expect(late.paused).toBe(true);
    expect(latePass.refused).toBe(true);
    expect(latePass.accepted()).toBe(false);
    expect(onTime.closedWith).toBeNull();
    clock.advance(60_000);
    expect(onTime.closedWith).toBeNull();
  });

  it('lets through two small messages before the token is presented, then only small ones until it is accepted, then anything', () => {
    const { admission } = setup();
    const read: string[] = [];
    const count = () => read.length;

    // Twilio: `connected`, `start`; a third message before the start closes it.
    const stranger = new FakeMediaSocket();
    const strangerPass = admission.admit(stranger, 'a')!;
    strangerPass.socket.on('message', (data: string) => read.push(data));
    for (const m of ['one', 'two', 'three', 'four']) stranger.emit('message', m, false);
    expect(read).toEqual(['one', 'two']);
    expect(stranger.closedWith?.code).toBe(1008);

    // The transport read the start (in the same turn as the messages after it): those are not counted.
    read.length = 0;
    const carrier = new FakeMediaSocket();
    const carrierPass = admission.admit(carrier, 'a')!;
    let started = false;
    carrierPass.presentedWhen(() => started);
    carrierPass.socket.on('message', (data: string) => {
      read.push(data);
      if (data === 'start') started = true;
    });
    for (const m of ['connected', 'start', ...Array.from({ length: 100 }, () => 'media')])
      carrier.emit('message', m, false);
    expect(count()).toBe(102);
    expect(carrier.closedWith).toBeNull();
    // Still waiting for the token's check: a big message closes it with 1009.
    carrier.emit('message', Buffer.alloc(4097), true);
    expect(carrier.closedWith?.code).toBe(1009);
    carrier.emit('message', 'media', false);
    expect(count()).toBe(102);

    // A route with its own size (the browser's audio may come at once, up to its maxPayload); accepted: sizes are the transport's business.
    const browser = new FakeMediaSocket();
    const browserPass = admission.admit(browser, 'b', { maxMessageBytes: 64 * 1024 })!;
    let bytes = 0;
    browserPass.socket.on('message', (data: Buffer) => (bytes += data.length));
    browserPass.presented();
    browser.emit('message', Buffer.alloc(64 * 1024), true);
    expect(browserPass.accepted()).toBe(true);
    browser.emit('message', Buffer.alloc(64 * 1024), true);
    expect(bytes).toBe(2 * 64 * 1024);
    expect(browser.closedWith).toBeNull();
  });

  it("passes the transport's own closes through: 1000 as it is, a violation as a refusal (read no more, cut off after the grace)", async () => {
    const { admission } = setup({ closeGraceMs: 20 });
    const normal = new FakeMediaSocket();
    const normalPass = admission.admit(normal, 'a')!;
    normalPass.accepted();
    normalPass.socket.close(1000, 'call ended');
    expect(normal.closedWith).toEqual({ code: 1000, reason: 'call ended' });
    expect(normal.paused).toBe(false);

    const rude = new FakeMediaSocket();
    const rudePass = admission.admit(rude, 'a')!;
    let read = 0;
    rudePass.socket.on('message', () => read++);
    rudePass.socket.close(1007, 'invalid_message');
    rude.emit('message', '{}', false);
    expect(read).toBe(0);
    expect(rude.closedWith).toEqual({ code: 1007, reason: 'invalid_message' });
    expect(rude.paused).toBe(true);
    expect(admission.waiting).toBe(1); // held until it is gone
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(rude.terminated).toBe(true);
    expect(admission.waiting).toBe(0);
  });
});
