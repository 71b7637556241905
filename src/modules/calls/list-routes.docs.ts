// What the OpenAPI document says of the routes in list-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  listCalls: {
    summary: 'Your calls, newest first',
    description:
      'Every call session of the account (outbound, inbound, temporary and web), newest first, `limit` at a time (default 20, at most 100); pass `nextBefore` as `before` for the next page.',
  },
  getCall: {
    summary: 'One call: status, direction, numbers, times, and once ended its transcript',
    description:
      'An ended call adds what its encrypted record in your `calls` store holds: transcript lines (`role` agent or caller, times in ms since the call was answered, `interrupted` for agent lines cut by barge-in, `recognised: false` for caller lines not recognised from audio, `latency` on agent lines that answer a caller turn), tool calls with their results, `recordingUrl` when the call was recorded, and `analysis` once its post-call analysis is written, a few seconds after the end (see POST /api/calls/{id}/analysis). 404 when it is not yours.',
  },
  getCallRecording: {
    summary: "A call's recording",
    description:
      'A WAV file: PCM16, 8 kHz, two channels (caller left, agent right). 404 when the call is not yours or has no recording.',
  },
});
