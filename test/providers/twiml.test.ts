import { describe, expect, it } from 'vitest';
import { mediaStreamUrl } from '../../src/modules/voice-agent/media-url.js';
import { connectStreamTwiml, dialTwiml, sayAndHangUpTwiml } from '../../src/providers/telephony/twiml.js';

describe('TwiML', () => {
  it('connects a media stream with its token as a custom parameter', () => {
    expect(connectStreamTwiml('wss://api.example.com/api/media/twilio', { token: 'a.b.c' })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://api.example.com/api/media/twilio"><Parameter name="token" value="a.b.c"/></Stream></Connect></Response>',
    );
  });
  it('escapes what it speaks and dials', () => {
    expect(sayAndHangUpTwiml('Sorry <b> & "you"')).toContain(
      '<Say>Sorry &lt;b&gt; &amp; &quot;you&quot;</Say><Hangup/>',
    );
    expect(
      dialTwiml({
        phone: '+14155550111',
        callerId: '+1415"',
        timeLimitSeconds: 60,
        statusCallbackUrl: 'https://api.example.com/cb?a=1&b=2',
      }),
    ).toContain(
      '<Dial timeLimit="60" callerId="+1415&quot;"><Number statusCallbackEvent="completed" statusCallback="https://api.example.com/cb?a=1&amp;b=2" statusCallbackMethod="POST">+14155550111</Number></Dial>',
    );
  });
  it("dials a transfer with the leg's time limit and a status callback for its final duration", () => {
    expect(
      dialTwiml({
        phone: '+14155550111',
        timeLimitSeconds: 1800.7,
        statusCallbackUrl: 'https://api.example.com/api/webhooks/twilio/dial/s1',
      }),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial timeLimit="1800"><Number statusCallbackEvent="completed" statusCallback="https://api.example.com/api/webhooks/twilio/dial/s1" statusCallbackMethod="POST">+14155550111</Number></Dial></Response>',
    );
  });
  it('derives the stream origin from PUBLIC_URL', () => {
    expect(mediaStreamUrl('https://api.example.com', '/api/media/twilio')).toBe(
      'wss://api.example.com/api/media/twilio',
    );
    expect(mediaStreamUrl('http://127.0.0.1:3000', '/api/media/twilio')).toBe('ws://127.0.0.1:3000/api/media/twilio');
  });
});
