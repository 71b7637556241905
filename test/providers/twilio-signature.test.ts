// Our X-Twilio-Signature code against the official twilio package as the oracle.
import fc from 'fast-check';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { formParams, twilioSignature, verifyTwilioSignature } from '../../src/providers/telephony/twilio-signature.js';

const TOKEN = '12345678901234567890123456789012';
const URL_ = 'https://api.example.com/api/webhooks/twilio/sms/0193?x=1';
const PARAMS = {
  MessageSid: 'SM123',
  MessageStatus: 'delivered',
  To: '+14155550123',
  From: '+14155550100',
  AccountSid: 'AC1',
};

const paramName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,12}$/);
const paramValue = fc.string({ maxLength: 30 });

describe('X-Twilio-Signature', () => {
  it('computes what the twilio package computes, for any parameters', () => {
    fc.assert(
      fc.property(
        fc.dictionary(paramName, fc.oneof(paramValue, fc.array(paramValue, { minLength: 1, maxLength: 3 }))),
        fc.webUrl({ withQueryParameters: true }),
        (params, url) => {
          expect(twilioSignature(TOKEN, url, params)).toBe(twilio.getExpectedTwilioSignature(TOKEN, url, params));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('verifies signatures the twilio package makes, and twilio.validateRequest accepts ours', () => {
    const theirs = twilio.getExpectedTwilioSignature(TOKEN, URL_, PARAMS);
    expect(verifyTwilioSignature([TOKEN], theirs, URL_, PARAMS)).toBe(0);
    expect(twilio.validateRequest(TOKEN, twilioSignature(TOKEN, URL_, PARAMS), URL_, PARAMS)).toBe(true);
  });

  it('accepts the URL signed with or without its port, as Twilio may send either', () => {
    const withPort = 'https://api.example.com:443/api/webhooks/twilio/sms/1';
    const sig = twilioSignature(TOKEN, withPort, PARAMS);
    expect(verifyTwilioSignature([TOKEN], sig, 'https://api.example.com/api/webhooks/twilio/sms/1', PARAMS)).toBe(0);
    expect(twilio.validateRequest(TOKEN, sig, 'https://api.example.com/api/webhooks/twilio/sms/1', PARAMS)).toBe(true);
    const sig2 = twilioSignature(TOKEN, 'http://127.0.0.1:3000/a', PARAMS);
    expect(verifyTwilioSignature([TOKEN], sig2, 'http://127.0.0.1:3000/a', PARAMS)).toBe(0);
  });

  it('refuses any change of URL, parameter, token or signature (agreeing with the oracle)', () => {
    const sig = twilioSignature(TOKEN, URL_, PARAMS);
    const cases: Array<[string, string, Record<string, string>, string]> = [
      [TOKEN, URL_.replace('sms/0193', 'sms/0194'), PARAMS, sig],
      [TOKEN, URL_.replace('x=1', 'x=2'), PARAMS, sig],
      [TOKEN, URL_, { ...PARAMS, MessageStatus: 'failed' }, sig],
      [TOKEN, URL_, { ...PARAMS, Extra: '' }, sig],
      ['another-token-another-token-0000', URL_, PARAMS, sig],
      [TOKEN, URL_, PARAMS, sig.slice(0, -2)],
      [TOKEN, URL_, PARAMS, ''],
    ];
    for (const [token, url, params, signature] of cases) {
      expect(verifyTwilioSignature([token], signature, url, params)).toBe(-1);
      expect(twilio.validateRequest(token, signature, url, params)).toBe(false);
    }
  });

  it('tells which of several tokens signed', () => {
    const sig = twilioSignature('second', URL_, PARAMS);
    expect(verifyTwilioSignature(['first', 'second'], sig, URL_, PARAMS)).toBe(1);
    expect(verifyTwilioSignature(['first'], sig, URL_, PARAMS)).toBe(-1);
  });

  it('reads repeated form names as arrays, as the signature needs', () => {
    expect(formParams('a=1&b=x%20y&a=2&c=')).toEqual({ a: ['1', '2'], b: 'x y', c: '' });
    const params = formParams('a=2&a=1&b=3');
    expect(twilioSignature(TOKEN, URL_, params)).toBe(twilio.getExpectedTwilioSignature(TOKEN, URL_, params));
  });
});
