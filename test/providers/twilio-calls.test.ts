// Twilio call control (Calls.json create and update) against the local server
// speaking Twilio's REST API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { TwilioTelephonyProvider } from '../../src/providers/telephony/twilio.js';
import { type TwilioFake, startTwilioFake } from '../support/twilio-fake.js';

let fake: TwilioFake;
let twilio: TwilioTelephonyProvider;
beforeAll(async () => {
  fake = await startTwilioFake();
  twilio = new TwilioTelephonyProvider({
    accountSid: fake.accountSid,
    authToken: fake.authToken,
    apiBase: fake.apiBase,
  });
});
afterAll(() => fake.close());

const twiml =
  '<Response><Connect><Stream url="wss://example.test/api/media/twilio"><Parameter name="token" value="t"/></Stream></Connect></Response>';

describe('Twilio call control', () => {
  it('places a call with inline TwiML, the four progress callbacks and asynchronous machine detection', async () => {
    const { callSid } = await twilio.calls.placeCall({
      from: '+14155550100',
      to: '+14155550199',
      twiml,
      statusCallbackUrl: 'https://example.test/api/webhooks/twilio/call/s1',
      machineDetectionUrl: 'https://example.test/api/webhooks/twilio/amd/s1',
      timeLimitSeconds: 1800,
    });
    const call = fake.calls.find((c) => c.sid === callSid)!;
    expect(call).toMatchObject({
      to: '+14155550199',
      from: '+14155550100',
      twiml,
      statusCallback: 'https://example.test/api/webhooks/twilio/call/s1',
      machineDetection: 'DetectMessageEnd',
      amdCallback: 'https://example.test/api/webhooks/twilio/amd/s1',
      timeLimit: '1800',
    });
    expect(call.statusCallbackEvents).toEqual(['initiated', 'ringing', 'answered', 'completed']);
    const request = fake.requests.at(-1)!;
    expect(request.form.AsyncAmd).toBe('true');
  });

  it('leaves machine detection off when no callback is given', async () => {
    const { callSid } = await twilio.calls.placeCall({
      from: '+14155550100',
      to: '+14155550199',
      twiml,
      statusCallbackUrl: 'https://example.test/cb',
    });
    expect(fake.calls.find((c) => c.sid === callSid)!.machineDetection).toBeNull();
  });

  it('redirects a live call to new TwiML and hangs it up; hanging up an ended call is not an error', async () => {
    const { callSid } = await twilio.calls.placeCall({
      from: '+14155550100',
      to: '+14155550199',
      twiml,
      statusCallbackUrl: 'https://example.test/cb',
    });
    await twilio.calls.redirectCall(callSid, '<Response><Dial>+14155550111</Dial></Response>');
    await twilio.calls.hangUpCall(callSid);
    const call = fake.calls.find((c) => c.sid === callSid)!;
    expect(call.redirects).toEqual(['<Response><Dial>+14155550111</Dial></Response>']);
    expect(call.status).toBe('completed');
    await expect(twilio.calls.hangUpCall(callSid)).resolves.toBeUndefined();
    await expect(twilio.calls.hangUpCall('CA00000000000000000000000000000000')).resolves.toBeUndefined();
  });

  it("transfers a live call with the leg's <Dial> and ends one with <Hangup/>, in Twilio's own markup", async () => {
    const place = () =>
      twilio.calls.placeCall({
        from: '+14155550100',
        to: '+14155550199',
        twiml,
        statusCallbackUrl: 'https://example.test/cb',
      });
    const transferred = await place();
    await twilio.calls.transferCall(transferred.callSid, {
      phone: '+14155550111',
      timeLimitSeconds: 90.7,
      statusCallbackUrl: 'https://example.test/api/webhooks/twilio/dial/s1?a=1&b=2',
      callerId: '+14155550100',
    });
    expect(fake.calls.find((c) => c.sid === transferred.callSid)!.redirects).toEqual([
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial timeLimit="90" callerId="+14155550100"><Number statusCallbackEvent="completed" statusCallback="https://example.test/api/webhooks/twilio/dial/s1?a=1&amp;b=2" statusCallbackMethod="POST">+14155550111</Number></Dial></Response>',
    ]);
    const ended = await place();
    await twilio.calls.endCall(ended.callSid);
    expect(fake.calls.find((c) => c.sid === ended.callSid)!.redirects).toEqual([
      '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>',
    ]);
  });

  it('maps a refusal to provider_refused and bad credentials to provider_error', async () => {
    const refused = await twilio.calls
      .placeCall({ from: '', to: '+14155550199', twiml, statusCallbackUrl: 'https://example.test/cb' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('provider_refused');
    const wrong = new TwilioTelephonyProvider({
      accountSid: fake.accountSid,
      authToken: 'wrong',
      apiBase: fake.apiBase,
    });
    const failed = await wrong.calls
      .placeCall({ from: '+14155550100', to: '+14155550199', twiml, statusCallbackUrl: 'https://example.test/cb' })
      .catch((e: unknown) => e);
    expect((failed as AppError).code).toBe('provider_error');
  });
});
