import { describe, expect, it } from 'vitest';
import { mulawToPcm, pcmToMulaw } from '../../../src/lib/audio.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { TwilioTransport, WebTransport } from '../../../src/modules/voice/transport.js';
import { FakeSocket, tone } from './fakes.js';

describe('TwilioTransport', () => {
  it('hands the start, caller frames, marks, dtmf and stop to the session', async () => {
    const socket = new FakeSocket();
    const transport = new TwilioTransport(socket);
    const frames: Int16Array[] = [];
    const events: string[] = [];
    transport.on('audio', (f) => frames.push(f));
    transport.on('mark', (n) => events.push(`mark:${n}`));
    transport.on('dtmf', (d) => events.push(`dtmf:${d}`));
    transport.on('stop', (r) => events.push(`stop:${r}`));
    socket.start({ token: 'tok' });
    await expect(transport.started).resolves.toEqual({
      streamSid: 'MZ0001',
      callSid: 'CA1',
      accountSid: 'AC1',
      customParameters: { token: 'tok' },
    });
    const audio = tone(400);
    socket.media(audio); // 400 samples: two frames now, 80 carried
    expect(frames.map((f) => f.length)).toEqual([160, 160]);
    socket.media(tone(80));
    expect(frames.length).toBe(3);
    expect([...frames[0]!]).toEqual([...mulawToPcm(pcmToMulaw(audio.slice(0, 160)))]);
    // An event this codec does not know (one Twilio may add) is ignored once the stream runs: the call goes on.
    socket.receive({ event: 'keepalive', sequenceNumber: '4', streamSid: 'MZ0001' });
    expect(socket.closedWith).toBeNull();
    socket.receive({ event: 'mark', sequenceNumber: '5', streamSid: 'MZ0001', mark: { name: 'm1' } });
    socket.receive({
      event: 'dtmf',
      sequenceNumber: '6',
      streamSid: 'MZ0001',
      dtmf: { track: 'inbound_track', digit: '5' },
    });
    socket.receive({
      event: 'stop',
      sequenceNumber: '7',
      streamSid: 'MZ0001',
      stop: { accountSid: 'AC1', callSid: 'CA1' },
    });
    socket.emit('close', 1000, Buffer.from(''));
    expect(events).toEqual(['mark:m1', 'dtmf:5', 'stop:stream_stopped']);
  });

  it('closes at the first message that is not Twilio Media Streams: unreadable 1007, anything else 1008, too big 1009', async () => {
    const cases: Array<[string, (socket: FakeSocket) => void, number]> = [
      ['not JSON', (socket) => socket.emit('message', 'garbage', false), 1007],
      ['binary', (socket) => socket.emit('message', Buffer.from([1, 2]), true), 1008],
      ['media before start', (socket) => socket.media(tone(160)), 1008],
      ['unknown event', (socket) => socket.receive({ event: 'hello', streamSid: 'MZ0001' }), 1008],
      [
        'too big',
        (socket) => socket.emit('message', JSON.stringify({ event: 'connected', padding: 'x'.repeat(5000) }), false),
        1009,
      ],
    ];
    for (const [what, send, code] of cases) {
      const socket = new FakeSocket();
      const transport = new TwilioTransport(socket);
      const stops: string[] = [];
      transport.on('stop', (r) => stops.push(r));
      send(socket);
      expect(socket.closedWith?.code, what).toBe(code);
      expect(stops, what).toEqual([code === 1009 ? 'message_too_big' : 'invalid_message']);
      await expect(transport.started, what).rejects.toThrow('before start');
      // Nothing more is read from it.
      socket.start();
      expect(transport.closed).toBe(true);
    }
    // After the start too: one message of another stream ends the stream.
    const socket = new FakeSocket();
    const transport = new TwilioTransport(socket);
    const stops: string[] = [];
    transport.on('stop', (r) => stops.push(r));
    socket.start();
    await transport.started;
    socket.receive({
      event: 'media',
      sequenceNumber: '2',
      streamSid: 'MZother',
      media: { track: 'inbound', chunk: '1', timestamp: '0', payload: 'AAAA' },
    });
    expect(socket.closedWith).toEqual({ code: 1008, reason: 'invalid_message' });
    expect(stops).toEqual(['invalid_message']);
    expect(transport.invalidMessages).toBe(1);
  });

  it('takes caller audio at real time plus its allowance, drops and counts the rest, and shuts out a stream that keeps flooding', async () => {
    const clock = new ManualClock(0);
    const socket = new FakeSocket();
    const transport = new TwilioTransport(socket, { clock });
    let frames = 0;
    const stops: string[] = [];
    transport.on('audio', () => frames++);
    transport.on('stop', (r) => stops.push(r));
    socket.start();
    await transport.started;
    // Real time, for a minute: every frame.
    for (let i = 0; i < 3000; i++) {
      clock.advance(20);
      socket.media(tone(160));
    }
    expect(frames).toBe(3000);
    expect(transport.inflow).toEqual({ audioMs: 60_000, droppedAudioMs: 0, droppedMessages: 0 });
    // Five seconds at once (a stall): the 2 s burst is taken, the rest dropped.
    clock.advance(20);
    for (let i = 0; i < 250; i++) socket.media(tone(160));
    expect(frames).toBe(3100);
    expect(transport.inflow.droppedAudioMs).toBe(3000);
    expect(stops).toEqual([]);
    // 100× real time: dropped, then shut out once 7 s ahead of real time.
    for (let i = 0; i < 1000 && !transport.closed; i++) {
      clock.advance(0.2);
      socket.media(tone(160));
    }
    expect(stops).toEqual(['audio_flood']);
    expect(socket.closedWith).toEqual({ code: 1008, reason: 'audio_flood' });
    expect(frames).toBeLessThan(3100 + 10);
    expect(transport.inflow.droppedAudioMs).toBeGreaterThan(3000);
  });

  it('drops marks and DTMF beyond 50 a second (200 at once) and shuts out a flood of them', async () => {
    const clock = new ManualClock(0);
    const socket = new FakeSocket();
    const transport = new TwilioTransport(socket, { clock });
    let marks = 0;
    const stops: string[] = [];
    transport.on('mark', () => marks++);
    transport.on('stop', (r) => stops.push(r));
    socket.start();
    await transport.started;
    socket.echoMarks(Array.from({ length: 300 }, (_, i) => `m${i}`));
    expect(marks).toBe(198); // the burst, less connected and start
    expect(transport.inflow.droppedMessages).toBe(102);
    for (let i = 0; i < 1000 && !transport.closed; i++) socket.echoMarks(['again']);
    expect(stops).toEqual(['message_flood']);
    expect(socket.closedWith?.code).toBe(1008);
  });

  it('sends 20 ms μ-law media, marks and clear for its stream, and closes once', async () => {
    const socket = new FakeSocket();
    const transport = new TwilioTransport(socket);
    transport.sendAudio(tone(160)); // before start: nowhere to send
    socket.start();
    await transport.started;
    const frame = tone(160);
    transport.sendAudio(frame);
    transport.sendMark('m1');
    transport.sendClear();
    expect(socket.sent).toEqual([
      { event: 'media', streamSid: 'MZ0001', media: { payload: Buffer.from(pcmToMulaw(frame)).toString('base64') } },
      { event: 'mark', streamSid: 'MZ0001', mark: { name: 'm1' } },
      { event: 'clear', streamSid: 'MZ0001' },
    ]);
    expect(Buffer.from(socket.sent[0].media.payload, 'base64').length).toBe(160);
    transport.close('done');
    transport.close('again');
    transport.sendAudio(frame);
    expect(socket.closedWith).toEqual({ code: 1000, reason: 'call ended' });
    expect(socket.sent).toHaveLength(3);
  });

  it('rejects started when the socket closes first', async () => {
    const socket = new FakeSocket();
    const transport = new TwilioTransport(socket);
    socket.emit('close', 1006, Buffer.from(''));
    await expect(transport.started).rejects.toThrow('before start');
  });
});

describe('WebTransport', () => {
  it('reads PCM16LE 16 kHz frames as 8 kHz frames and JSON control messages', () => {
    const socket = new FakeSocket();
    const transport = new WebTransport(socket);
    const frames: Int16Array[] = [];
    const events: string[] = [];
    transport.on('audio', (f) => frames.push(f));
    transport.on('mark', (n) => events.push(`mark:${n}`));
    transport.on('dtmf', (d) => events.push(`dtmf:${d}`));
    transport.on('stop', (r) => events.push(`stop:${r}`));
    transport.on('invalid', (e) => events.push(`invalid:${e.message.slice(0, 20)}`));
    const wide = tone(640, 8000, 440, 16000); // 40 ms at 16 kHz
    const bytes = Buffer.alloc(wide.length * 2);
    wide.forEach((s, i) => bytes.writeInt16LE(s, i * 2));
    socket.emit('message', bytes, true);
    expect(frames.map((f) => f.length)).toEqual([160, 160]);
    socket.emit('message', JSON.stringify({ type: 'mark', name: 'm3' }), false);
    socket.emit('message', JSON.stringify({ type: 'dtmf', digit: '9' }), false);
    socket.emit('message', JSON.stringify({ type: 'hangup' }), false);
    expect(events).toEqual(['mark:m3', 'dtmf:9', 'stop:caller_hung_up']);
    // The caller hung up: the session's end still tells them why, then closes.
    transport.close('caller_hung_up');
    expect(socket.sent).toEqual([{ type: 'ended', reason: 'caller_hung_up' }]);
    expect(socket.closedWith).toEqual({ code: 1000, reason: 'caller_hung_up' });
  });

  it('closes at the first invalid message, telling the browser why: audio not in whole frames or not JSON 1007, an unknown message 1008', () => {
    const cases: Array<[unknown, boolean, number]> = [
      [Buffer.alloc(641), true, 1007],
      ['{not json', false, 1007],
      [JSON.stringify({ type: 'nonsense' }), false, 1008],
    ];
    for (const [data, binary, code] of cases) {
      const socket = new FakeSocket();
      const transport = new WebTransport(socket);
      const stops: string[] = [];
      transport.on('stop', (r) => stops.push(r));
      socket.emit('message', data, binary);
      expect(stops).toEqual(['invalid_message']);
      expect(socket.sent).toEqual([{ type: 'ended', reason: 'invalid_message' }]);
      expect(socket.closedWith).toEqual({ code, reason: 'invalid_message' });
      socket.emit('message', JSON.stringify({ type: 'mark', name: 'late' }), false);
      expect(transport.closed).toBe(true);
    }
  });

  it('takes whole frames of a message up to real time plus its allowance, decodes none of the rest, and shuts out a flood', () => {
    const clock = new ManualClock(0);
    const socket = new FakeSocket();
    const transport = new WebTransport(socket, undefined, { clock });
    let frames = 0;
    const stops: string[] = [];
    transport.on('audio', () => frames++);
    transport.on('stop', (r) => stops.push(r));
    const second = Buffer.alloc(640 * 50); // 1 s of 16 kHz frames in one message
    socket.emit('message', second, true);
    socket.emit('message', second, true);
    socket.emit('message', second, true);
    // The 2 s burst: two messages whole, the third dropped.
    expect(frames).toBe(100);
    expect(transport.inflow).toEqual({ audioMs: 2000, droppedAudioMs: 1000, droppedMessages: 0 });
    clock.advance(500);
    socket.emit('message', second, true);
    // Half a second of real time plus 10 %: 27 whole frames of 20 ms.
    expect(frames).toBe(127);
    // Two calls' worth of the issue's flood (100× real time): shut out with 1008, the browser told why.
    for (let i = 0; i < 100 && !transport.closed; i++) {
      clock.advance(10);
      socket.emit('message', second, true);
    }
    expect(stops).toEqual(['audio_flood']);
    expect(socket.sent.at(-1)).toEqual({ type: 'ended', reason: 'audio_flood' });
    expect(socket.closedWith).toEqual({ code: 1008, reason: 'audio_flood' });
    expect(frames).toBeLessThan(127 + 5);
  });

  it('sends nothing more once the browser closed its socket', () => {
    const socket = new FakeSocket();
    const transport = new WebTransport(socket);
    socket.emit('close');
    transport.close('socket_closed');
    expect(socket.sent).toEqual([]);
  });

  it('sends agent audio as 16 kHz PCM16LE binary, JSON marks, clear, notices, then ended and close 1000', () => {
    const socket = new FakeSocket();
    const transport = new WebTransport(socket);
    transport.sendAudio(tone(160));
    transport.sendMark('m1');
    transport.sendClear();
    transport.notify({ type: 'transcript', role: 'agent', text: 'Hi', final: true });
    transport.close('agent_ended');
    expect(Buffer.isBuffer(socket.sent[0])).toBe(true);
    expect(socket.sent[0].length).toBe(640);
    expect(socket.sent.slice(1)).toEqual([
      { type: 'mark', name: 'm1' },
      { type: 'clear' },
      { type: 'transcript', role: 'agent', text: 'Hi', final: true },
      { type: 'ended', reason: 'agent_ended' },
    ]);
    expect(socket.closedWith).toEqual({ code: 1000, reason: 'agent_ended' });
  });
});
