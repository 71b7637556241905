// What the OpenAPI document says of the routes in list-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { EXAMPLE_ANALYSIS } from '../analysis/schemas.js';

const exampleCall = {
  id: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07',
  direction: 'outbound',
  status: 'completed',
  outcome: 'completed',
  from: '+14155550100',
  to: '+14155550123',
  startedAt: '2026-11-25T10:00:00.000Z',
  answeredAt: '2026-11-25T10:00:06.000Z',
  endedAt: '2026-11-25T10:01:02.000Z',
  durationSeconds: 56,
  costUsd: 0.02,
};

export const examples = {
  listCalls: { calls: [exampleCall], nextBefore: null },
  getCall: {
    ...exampleCall,
    transcript: [
      { role: 'agent' as const, text: 'Hello Grace, this is Amy from the clinic.', startMs: 120, endMs: 2300 },
      { role: 'caller' as const, text: 'Can you tell me your opening hours please?', startMs: 2900, endMs: 5100 },
      {
        role: 'agent' as const,
        text: 'We are open Monday to Friday, 9 to 5.',
        startMs: 5900,
        endMs: 8200,
        latency: { sttMs: 310, llmFirstTokenMs: 420, ttsFirstByteMs: 150, overheadMs: 12, totalMs: 892 },
      },
    ],
    toolCalls: [
      {
        name: 'search_knowledge',
        arguments: { query: 'opening hours' },
        result: { matches: [{ text: 'We are open Monday to Friday, 9 to 5.' }] },
        atMs: 5300,
      },
    ],
    // A call that walks a pathway also has its path and variables (transcript lines their `node`).
    pathway: {
      id: '019ab3e1-5d20-7c4b-8e31-0a9f6c2d7b14',
      name: 'Clinic front desk',
      path: [
        { node: 'greet', atMs: 0 },
        { node: 'answer', atMs: 5200, edge: '/edges/0' },
      ],
      variables: { topic: 'opening hours' },
    },
    variables: { topic: 'opening hours' },
    recordingUrl: '/api/calls/019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07/recording',
    analysis: EXAMPLE_ANALYSIS,
  },
};

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
