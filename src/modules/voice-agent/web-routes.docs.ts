// What the OpenAPI document says of the routes in web-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { examplePathway } from '../pathways/examples.js';

/** GET /api/media/web's protocol, message by message. */
const PROTOCOL = [
  'The audio and messages of a web call started with POST /api/calls/web; open the `url` of its answer (this route with `?token=`) with a WebSocket client within 60 s. The token is single use: a missing, forged, expired or already used token closes the socket with code 1008. A plain GET (no WebSocket upgrade) is 426.',
  '',
  '**Limits.** Until the token is accepted (a few milliseconds) the socket has 5 s and a place among at most MEDIA_UNAUTHENTICATED_PER_ADDRESS (8) such sockets per remote address and MEDIA_UNAUTHENTICATED_MAX (200) in all (beyond: closed at once with 1013). A message is at most 64 KB (two seconds of audio; larger: closed with 1009). The first message that is not this protocol closes the socket: 1007 for audio not in whole frames or text that is not JSON, 1008 for any other; a call under way then ends `failed`, outcome `refused`, reason `invalid_message`, after an `ended` message. Caller audio is taken at real time plus 10 %, with a 2 s burst: frames beyond are dropped (counted, not heard); a client 7 s ahead of real time (2× real time for 7 s; 100× within a tenth of a second) is sent `{ "type": "ended", "reason": "audio_flood" }`, closed with 1008, and its call ends `refused`. Text messages beyond 50 a second (200 at once) are dropped likewise (`message_flood`).',
  '',
  '**Client → server.** Binary frames: caller audio, PCM16LE mono at the announced `sampleRate` (16 kHz), any whole number of 20 ms frames (640 bytes each at 16 kHz), as it is captured. Text frames, JSON:',
  '- `{ "type": "mark", "name": "<name>" }`: the client has played the agent\'s audio up to that mark. Echo every mark once its audio has played (not when it arrives): the history keeps only what the caller heard, and the agent waits for the last mark before it listens for silence or hangs up. A mark echoed after a `clear` is stale and ignored.',
  '- `{ "type": "dtmf", "digit": "0"–"9" | "*" | "#" | "A"–"D" }`: a key press.',
  '- `{ "type": "hangup" }`: the caller hangs up; the server ends the call (outcome `completed`, reason `caller_hung_up`), answers `ended` and closes the socket with 1000. Closing the socket ends the call too (reason `socket_closed`).',
  '',
  "**Server → client.** Binary frames: the agent's audio, PCM16LE mono at the same rate, in 20 ms frames paced in real time (a little ahead, never a whole sentence at once). Text frames, JSON:",
  '- `{ "type": "mark", "name": "<name>" }`: after each chunk of a reply (every 400 ms of audio and at the end of each sentence); echo it once played.',
  '- `{ "type": "clear" }`: the caller spoke over the agent (barge-in): stop playback now and drop what is queued.',
  '- `{ "type": "transcript", "role": "agent" | "caller", "text": "…", "final": true | false, "interrupted"?: true }`: the transcript as it is said. An agent reply first comes with `final: false` as the agent starts saying each of its sentences (its first audio frame goes out), the text growing by a sentence each time: show it at once, the words arrive with their audio, not after it. Once the reply has played, or the caller cut it, the same line comes again with `final: true` and what the caller heard of it (the record\'s line), plus `interrupted: true` when a barge-in cut it; an empty text means none of it was heard. Each agent line is one reply: its `final: false` messages are replaced by the next message of the same role. A caller line comes once, `final: true`, at the end of the caller\'s turn; without a recogniser it reads `(speech not recognised)`, and words the recogniser was not sure of are followed by `(unclear)` (the agent did not act on them).',
  '- `{ "type": "tool", "name": "search_knowledge", "arguments": { … }, "result": { … } }`: a tool the agent called, with its result.',
  '- `{ "type": "ended", "reason": "<reason>" }`: the call is over; the socket then closes with 1000. Reasons: `agent_ended` (the agent said goodbye), `silence` (no answer to two reprompts), `max_duration` (WEB_CALL_MAX_SECONDS or the agent\'s `maxDurationSeconds`), `provider_error`, `ended_by_server`, and `caller_hung_up` after the client\'s own `hangup`. Nothing is sent once the client has closed the socket.',
  '',
  'The call is recorded like a phone call: `call_status` events with `direction: "web"` (in_progress, then completed or failed), `call_transcript` events, and once it ends GET /api/calls/{id} with its transcript, tool calls, per-turn latency and, when CALL_RECORDING is on, the two-channel recording (8 kHz). Web calls are never charged.',
].join('\n');

export const docs = describeRoutes({
  startWebCall: {
    summary: 'Call your agent from a browser',
    description:
      "Starts a free test call with an agent: `agentId` (an object of your `agents` store holding an agent record) or `agent` (an agent record inline), optionally with a knowledge base, integrations, a persona and a pathway (`pathwayId`, or `pathway`: a document, `{ id }` or the old `{ name?, steps }`) that replace the agent's own. The agent's `pathway` or `pathwayId` and custom `tools` are checked as for POST /api/session/call; `{{contact.name}}` and `{{now}}` in its instructions, prompt and first message are filled in (an unknown `{{name}}` is left empty). The answer names the session, a single-use WebSocket URL valid 60 s (GET /api/media/web: its protocol is described there) and the audio format both ways. The call is carried by the same voice agent as phone calls: recognition is the configured speech to text (else pocketsphinx when installed, at the browser's 16 kHz; else each caller utterance is \"(speech not recognised)\"), the answer comes from the configured model or the sandbox dialogue engine. Web calls are never charged; they end after WEB_CALL_MAX_SECONDS (600) or the agent's shorter `maxDurationSeconds` (outcome `max_duration`). 400 `invalid_input` without exactly one of `agentId` and `agent`, for an agent object that is not an agent record, for both `pathway` and `pathwayId`, or for a custom tool that is not valid (the message names its field, e.g. `agent.tools[0].url`); 404 for an agent, knowledge base, integration, persona or pathway that is not yours; 422 `invalid_pathway` for a pathway that is not valid (every error, with its path in the pathway); 429 `too_many_calls` when WEB_CALL_CONCURRENCY_PER_USER (2) web calls of yours are set up or under way (a set-up call counts until its URL expires); 429 `rate_limited` past 20 web calls started per hour (see Retry-After).",
  },
  webCallMedia: {
    summary: 'The WebSocket of a web call (audio both ways, transcript, tool calls, marks, clear, end)',
    description: PROTOCOL,
  },
});

export const examples = {
  startWebCall: {
    sessionId: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07',
    url: 'wss://api.example.com/api/media/web?token=eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.…',
    expiresAt: '2026-11-26T10:01:00.000Z',
    audio: { encoding: 'pcm16le' as const, sampleRate: 16000, frameMs: 20 as const },
  },
  startWebCallBody: [
    { agentId: '019ab3f0-5d11-7c2e-8f3a-4b6c1d2e3f40' },
    {
      agent: {
        name: 'Amy',
        firstMessage: 'Hello, this is Amy from the clinic. How can I help?',
        prompt: 'Answer questions about the clinic.',
      },
      knowledgeBaseId: '019ab3f0-6e22-7d3f-9a4b-5c7d2e3f4051',
      personaId: 'local-amy',
    },
    { agentId: '019ab3f0-5d11-7c2e-8f3a-4b6c1d2e3f40', pathwayId: '019ab3f0-8a33-7e40-9b5c-6d8e3f405162' },
    {
      agent: {
        name: 'Ava',
        firstMessage: 'Hi, this is Ava from Acme. How can I help?',
        pathway: examplePathway,
        tools: [
          {
            type: 'http',
            name: 'check_order',
            description: 'Looks an order up by its number',
            parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
            url: 'https://api.example.com/orders/lookup',
            headers: { Authorization: 'Bearer sk_live_abc123' },
            speak: 'One moment while I look that up.',
          },
        ],
      },
    },
  ],
};
