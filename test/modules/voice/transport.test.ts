import { describe, expect, it } from 'vitest';
import { mulawToPcm, pcmToMulaw } from '../../../src/lib/audio.js';
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
    socket.media(tone(160)); // before start: no stream yet, ignored
    socket.start({ token: 'tok' });
    await expect(transport.started).resolves.toEqual({ streamSid: 'MZ0001', callSid: 'CA1', accountSid: 'AC1', customParameters: { token: 'tok' } });
    const audio = tone(400);
    socket.media(audio); // 400 samples: two frames now, 80 carried
    expect(frames.map((f) => f.length)).toEqual([160, 160]);
    socket.media(tone(80));
    expect(frames.length).toBe(3);
    expect([...frames[0]!]).toEqual([...mulawToPcm(pcmToMulaw(audio.slice(0, 160)))]);
    socket.receive({ event: 'mark', sequenceNumber: '5', streamSid: 'MZ0001', mark: { name: 'm1' } });
    socket.receive({ event: 'dtmf', sequenceNumber: '6', streamSid: 'MZ0001', dtmf: { track: 'inbound_track', digit: '5' } });
    socket.receive({ event: 'stop', sequenceNumber: '7', streamSid: 'MZ0001', stop: { accountSid: 'AC1', callSid: 'CA1' } });
    socket.emit('close', 1000, Buffer.from(''));
    expect(events).toEqual(['mark:m1', 'dtmf:5', 'stop:stream_stopped']);
  });

  it('ignores malformed messages and media of another stream without crashing', () => {
    const socket = new FakeSocket();
    const transport = new TwilioTransport(socket);
    const invalid: string[] = [];
    transport.on('invalid', (e) => invalid.push(e.message));
    socket.start();
    socket.emit('message', 'garbage', false);
    socket.emit('message', Buffer.from([1, 2]), true);
    socket.receive({ event: 'media', sequenceNumber: '2', streamSid: 'MZother', media: { track: 'inbound', chunk: '1', timestamp: '0', payload: 'AAAA' } });
    expect(invalid).toHaveLength(3);
    expect(transport.invalidMessages).toBe(3);
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
    socket.emit('message', Buffer.alloc(641), true);
    socket.emit('message', JSON.stringify({ type: 'mark', name: 'm3' }), false);
    socket.emit('message', JSON.stringify({ type: 'dtmf', digit: '9' }), false);
    socket.emit('message', JSON.stringify({ type: 'nonsense' }), false);
    socket.emit('message', JSON.stringify({ type: 'hangup' }), false);
    expect(events).toEqual(['invalid:audio must be whole ', 'mark:m3', 'dtmf:9', 'invalid:unknown message', 'stop:caller_hung_up']);
    // The caller hung up: the session's end still tells them why, then closes.
    transport.close('caller_hung_up');
    expect(socket.sent).toEqual([{ type: 'ended', reason: 'caller_hung_up' }]);
    expect(socket.closedWith).toEqual({ code: 1000, reason: 'caller_hung_up' });
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
    expect(socket.sent.slice(1)).toEqual([{ type: 'mark', name: 'm1' }, { type: 'clear' }, { type: 'transcript', role: 'agent', text: 'Hi', final: true }, { type: 'ended', reason: 'agent_ended' }]);
    expect(socket.closedWith).toEqual({ code: 1000, reason: 'agent_ended' });
  });
});
