// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { twilioSignatureDoc } from '../telephony/schemas.js';

/** A signed callback of Twilio's about a call (the rule its description starts with). */
const twilioCallback = (description: string) =>
  `Called by Twilio, not by API users. Checked before anything else: ${twilioSignatureDoc}; a bad signature is 400 \`invalid_signature\` and changes nothing. ${description}`;

export const examples = {
  /** The voice webhook's answer: the call's audio to the media WebSocket. */
  twilioVoiceWebhook:
    '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://api.example.com/api/media/twilio"><Parameter name="token" value="eyJ…"/></Stream></Connect></Response>',
  /** The form a dialled leg's final status comes as. */
  twilioDialedLegCallbackBody: {
    AccountSid: 'AC0123456789abcdef0123456789abcdef',
    CallSid: 'CAfedcba9876543210fedcba9876543210',
    ParentCallSid: 'CA0123456789abcdef0123456789abcdef',
    CallStatus: 'completed',
    CallDuration: '184',
    Direction: 'outbound-dial',
    To: '+14155550111',
    From: '+14155550100',
  },
};

export const docs = describeRoutes({
  twilioCallStatusCallback: {
    summary: "Twilio's progress of a call the voice agent carries",
    description: twilioCallback(
      "CallStatus initiated/queued, ringing, in-progress, completed, busy, no-answer, canceled, failed moves the session forward once per status (a `call_status` event and webhook). While the media stream is carried, the instance carrying it reports the end with the transcript; Twilio's `completed` ends only calls nobody carries.",
    ),
  },
  twilioMachineDetectionCallback: {
    summary: "Twilio's answering-machine verdict for an outbound call",
    description: twilioCallback(
      "`AnsweredBy` (human, machine_end_beep, machine_end_silence, machine_end_other, fax, unknown) reaches the live call: after a machine's beep the agent speaks its `voicemailMessage` once and hangs up (none: hangs up at once), outcome `voicemail`.",
    ),
  },
  twilioDialedLegCallback: {
    summary: "Twilio's final status of the number a call was transferred to",
    description: twilioCallback(
      "The `<Number statusCallback>` of a transfer's `<Dial>`: the dialled leg's `CallStatus` and `CallDuration` (seconds from its answer; `ParentCallSid` must be the call's own sid, else 400 `invalid_input`). A final status (completed, busy, no-answer, failed, canceled) settles the leg's charge once from `CallDuration`, per started minute at the dialled number's outbound rate plus the call's own, never more than its hold (`<Dial timeLimit>` is what the hold pays for); also long after the call's session ended. A retried callback charges nothing more; other statuses change nothing. 404 when the session has no transfer leg.",
    ),
  },
  twilioVoiceWebhook: {
    summary: "A call to one of your numbers (Twilio's voice webhook)",
    description:
      `Called by Twilio, not by API users; attaching a number to an inbound configuration points the number's voice URL here. Checked before anything else: ${twilioSignatureDoc} (a bad one is 400 \`invalid_signature\`). ` +
      "The number's inbound configuration decides who answers: its agent record (from your `agents` store: `{ name, instructions?, prompt?, firstMessage?, voicemailMessage?, personaId?, pathway?, pathwayId?, knowledgeBaseId?, integrations?, tools?, maxDurationSeconds? }`: `pathway` a pathway document, `{ id }` or the old `{ name?, steps }`, `pathwayId` an object of your `conversational-pathways` store, `tools` custom HTTP tools) and human agents (from `contacts`: `{ name, phone }`). The answer is TwiML connecting the call's audio to the media WebSocket; a number not attached or suspended, an unreadable agent (or one whose pathway is not yours or not valid, or whose custom tool is not valid), an owner without allowance or balance, or the concurrency limit is answered with one spoken sentence and `<Hangup/>`, and the session ends `failed` with outcome `refused` and its reason (`not_attached`, `number_suspended`, `agent_unreadable`, `insufficient_funds`, `concurrency_limit`). Inbound calls are charged at the number's country's inbound rate, after the plan's inbound allowance.",
  },
  twilioMediaStream: {
    summary: 'Twilio Media Streams WebSocket of a call the voice agent carries',
    description:
      'Opened by Twilio from the `<Connect><Stream>` TwiML the service answers with, not by API users. Speaks Twilio Media Streams exactly: in `connected`, `start` (`streamSid`, `callSid`, `customParameters.token`), `media` (base64 μ-law 8 kHz, 20 ms frames), `mark`, `dtmf`, `stop`; out `media`, `mark` (after each reply chunk), `clear` (barge-in). The token is single use, bound to the call session and to its carrier call (`start.callSid` must be the call the session placed or answered), and expires 60 s after the call can connect; anything else closes the socket with 1008 and touches no call. ' +
      'Until the token is accepted the socket gets what Twilio needs and no more: 5 s from open, messages of at most 4 KB, `connected` and `start` first (a third message before `start` closes it with 1008), and a place among at most MEDIA_UNAUTHENTICATED_PER_ADDRESS (8) such sockets per remote address and MEDIA_UNAUTHENTICATED_MAX (200) in all (beyond: closed at once with 1013). ' +
      'Every message must be Twilio Media Streams, all through the call: the first that is not closes the socket (1007 for one that is not JSON, 1008 for any other, 1009 for one over 4 KB; a WebSocket message over 64 KB is refused by the server with 1009) and a call under way ends `failed`, outcome `refused`, reason `invalid_message`. Caller audio is taken at real time plus 10 % with a 2 s burst; more is dropped and counted, and a stream 7 s ahead of real time (2× real time for 7 s) is closed with 1008 and its call ends `refused`, reason `audio_flood`; marks and DTMF beyond 50 a second (200 at once) likewise (`message_flood`).',
  },
});
