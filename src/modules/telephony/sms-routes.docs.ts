// What the OpenAPI document says of the routes in sms-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { smsMessageExample, twilioSignatureDoc } from './schemas.js';

export const docs = describeRoutes({
  sendSms: {
    summary: 'Send an SMS from one of your numbers',
    description:
      "The sender must be your number and able to send SMS (404 / 409 otherwise); `to` in E.164; body 1–1,600 characters; at most 60 messages a minute per user (429). Each message costs `SMS_PRICE_USD` per segment (160 GSM-7 / 70 UCS-2 characters; 153 / 67 each when split), rounded up to the next cent, held from your prepaid balance before it is sent (402 `insufficient_funds` when the balance does not cover it: nothing is sent), kept when it reaches `sent` or `delivered`, returned when it fails first. The answer mirrors the provider's; delivery updates arrive at the service (`sms_status` events, GET /api/sms/messages/{id}). Send an `Idempotency-Key` to retry without sending twice.",
  },
  listSms: {
    summary: 'Messages you sent, newest first, with their status histories',
    description: 'Optional `phoneNumberId` filter; page with `before` = the id of the last message already seen.',
  },
  getSms: {
    summary: 'One message you sent, with its status history',
    description: '404 when it is not yours.',
  },
  twilioSmsStatusCallback: {
    summary: 'Twilio status callback for a message (called by the provider)',
    description:
      `Checked before anything else: ${twilioSignatureDoc}` +
      '; a bad signature is 400 `invalid_signature` and changes nothing. Each status is recorded once per message (repeats are no-ops) and emitted as an `sms_status` event.',
  },
});

export const examples = {
  sendSms: {
    ...smsMessageExample,
    status: 'queued',
    statuses: [smsMessageExample.statuses[0]],
    updatedAt: smsMessageExample.createdAt,
  },
  listSms: [smsMessageExample],
};
