import { describe, expect, it } from 'vitest';
import {
  formatClear,
  formatMark,
  formatMedia,
  mediaTemplate,
  parseTwilioMessage,
  TwilioMessageError,
} from '../../../src/modules/voice/twilio-codec.js';

describe('Twilio Media Streams codec', () => {
  it('parses every inbound message Twilio sends', () => {
    expect(parseTwilioMessage('{"event":"connected","protocol":"Call","version":"1.0.0"}')).toEqual({
      event: 'connected',
      protocol: 'Call',
      version: '1.0.0',
    });
    const start = parseTwilioMessage(
      JSON.stringify({
        event: 'start',
        sequenceNumber: '1',
        start: {
          accountSid: 'AC1',
          streamSid: 'MZ1',
          callSid: 'CA1',
          tracks: ['inbound'],
          customParameters: { token: 'abc' },
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        },
        streamSid: 'MZ1',
      }),
    );
    expect(start).toEqual({
      event: 'start',
      sequenceNumber: 1,
      streamSid: 'MZ1',
      callSid: 'CA1',
      accountSid: 'AC1',
      tracks: ['inbound'],
      customParameters: { token: 'abc' },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    });
    const media = parseTwilioMessage(
      JSON.stringify({
        event: 'media',
        sequenceNumber: '3',
        media: {
          track: 'inbound',
          chunk: '1',
          timestamp: '5',
          payload: Buffer.from([0xff, 0x7f, 0x00]).toString('base64'),
        },
        streamSid: 'MZ1',
      }),
    );
    expect(media).toMatchObject({
      event: 'media',
      sequenceNumber: 3,
      streamSid: 'MZ1',
      track: 'inbound',
      chunk: 1,
      timestamp: 5,
    });
    expect([...(media as { payload: Uint8Array }).payload]).toEqual([0xff, 0x7f, 0x00]);
    expect(parseTwilioMessage('{"event":"mark","sequenceNumber":"4","streamSid":"MZ1","mark":{"name":"m1"}}')).toEqual({
      event: 'mark',
      sequenceNumber: 4,
      streamSid: 'MZ1',
      name: 'm1',
    });
    expect(
      parseTwilioMessage(
        '{"event":"dtmf","streamSid":"MZ1","sequenceNumber":"5","dtmf":{"track":"inbound_track","digit":"#"}}',
      ),
    ).toEqual({ event: 'dtmf', sequenceNumber: 5, streamSid: 'MZ1', track: 'inbound_track', digit: '#' });
    expect(
      parseTwilioMessage(
        '{"event":"stop","sequenceNumber":"6","streamSid":"MZ1","stop":{"accountSid":"AC1","callSid":"CA1"}}',
      ),
    ).toEqual({ event: 'stop', sequenceNumber: 6, streamSid: 'MZ1', callSid: 'CA1', accountSid: 'AC1' });
  });

  it.each([
    ['not JSON', '{"event":'],
    ['not an object', '[1,2]'],
    ['no event', '{}'],
    ['an event name that is no word', '{"event":"<script>"}'],
    ['start without callSid', '{"event":"start","sequenceNumber":"1","streamSid":"MZ1","start":{"streamSid":"MZ1"}}'],
    [
      'non-string custom parameter',
      '{"event":"start","sequenceNumber":"1","streamSid":"MZ1","start":{"callSid":"CA1","customParameters":{"token":5}}}',
    ],
    [
      'media payload not base64',
      '{"event":"media","sequenceNumber":"2","streamSid":"MZ1","media":{"chunk":"1","timestamp":"0","payload":"!!!!"}}',
    ],
    ['media without media', '{"event":"media","sequenceNumber":"2","streamSid":"MZ1"}'],
    [
      'negative chunk',
      '{"event":"media","sequenceNumber":"2","streamSid":"MZ1","media":{"chunk":-1,"timestamp":"0","payload":""}}',
    ],
    ['mark without name', '{"event":"mark","sequenceNumber":"4","streamSid":"MZ1","mark":{}}'],
    ['bad digit', '{"event":"dtmf","sequenceNumber":"4","streamSid":"MZ1","dtmf":{"digit":"x"}}'],
  ])('rejects %s with a TwilioMessageError', (_name, text) => {
    expect(() => parseTwilioMessage(text)).toThrow(TwilioMessageError);
  });

  it('formats outbound media, mark and clear', () => {
    expect(JSON.parse(formatMedia('MZ1', new Uint8Array([1, 2, 3])))).toEqual({
      event: 'media',
      streamSid: 'MZ1',
      media: { payload: 'AQID' },
    });
    expect(JSON.parse(formatMark('MZ1', 'm7'))).toEqual({ event: 'mark', streamSid: 'MZ1', mark: { name: 'm7' } });
    expect(JSON.parse(formatClear('MZ1'))).toEqual({ event: 'clear', streamSid: 'MZ1' });
  });

  it('the media template gives exactly the text of JSON.stringify, for any stream sid and payload', () => {
    const payloads = [
      new Uint8Array(0),
      new Uint8Array([1, 2, 3]),
      Uint8Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff),
      Buffer.alloc(160, 0xff).subarray(3, 163 - 3),
    ];
    for (const sid of ['MZ1', 'MZ"quoted"\\back\nline\u2028', 'é—😀']) {
      const format = mediaTemplate(sid);
      for (const mulaw of payloads) {
        const expected = JSON.stringify({
          event: 'media',
          streamSid: sid,
          media: { payload: Buffer.from(mulaw).toString('base64') },
        });
        expect(format(mulaw)).toBe(expected);
        expect(formatMedia(sid, mulaw)).toBe(expected);
      }
    }
  });
});
