// What the OpenAPI document says of the routes in sandbox-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  ringSandboxNumber: {
    summary: 'Ring one of your sandbox numbers from a simulated phone',
    description:
      "Present only while the sandbox telephony provider is active and NODE_ENV is not production. The sandbox carrier calls your number exactly as Twilio would: it POSTs the number's signed voice webhook (`POST /api/webhooks/twilio/voice/{numberId}`) to PUBLIC_URL, follows the TwiML answer by opening the media WebSocket with its stream parameters, and its simulated caller speaks `script` (real audio at real pace; recognised by pocketsphinx when installed). " +
      'Answers 202 with the call session as soon as the webhook has answered, whatever happens next: follow it with `GET /api/events/call_status?session_id=<id>` or `GET /api/calls/{id}`. A number that is not attached to an inbound configuration or is suspended, an agent record that cannot be read, an owner without inbound allowance or balance, or the concurrency limit: the call is refused as Twilio carries it (one spoken sentence, a hang-up) and the session ends `failed` with outcome `refused` and its `reason` (`not_attached`, `number_suspended`, `agent_unreadable`, `insufficient_funds`, `concurrency_limit`). ' +
      "Before any call: 404 for a number that is unknown or not yours; 409 `conflict` for a number Twilio carries (call it from a phone) or one that cannot take calls; 502 `provider_error` when the carrier cannot reach the voice webhook (PUBLIC_URL is not this server). The call is charged like any inbound call (the number's country's inbound rate after your plan's inbound allowance).",
  },
});
