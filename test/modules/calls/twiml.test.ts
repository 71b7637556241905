import { describe, expect, it } from 'vitest';
import { connectStreamTwiml, dialTwiml, mediaStreamUrl, sayAndHangUpTwiml } from '../../../src/modules/calls/twiml.js';

describe('TwiML', () => {
  it('connects a media stream with its token as a custom parameter', () => {
    expect(connectStreamTwiml('wss://api.example.com/api/media/twilio', { token: 'a.b.c' })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://api.example.com/api/media/twilio"><Parameter name="token" value="a.b.c"/></Stream></Connect></Response>',
    );
  });
  it('escapes what it speaks and dials', () => {
    expect(sayAndHangUpTwiml('Sorry <b> & "you"')).toContain('<Say>Sorry &lt;b&gt; &amp; &quot;you&quot;</Say><Hangup/>');
    expect(dialTwiml('+14155550111', '+1415"')).toContain('<Dial callerId="+1415&quot;">+14155550111</Dial>');
  });
  it('derives the stream origin from PUBLIC_URL', () => {
    expect(mediaStreamUrl('https://api.example.com', '/api/media/twilio')).toBe('wss://api.example.com/api/media/twilio');
    expect(mediaStreamUrl('http://127.0.0.1:3000', '/api/media/twilio')).toBe('ws://127.0.0.1:3000/api/media/twilio');
  });
});
