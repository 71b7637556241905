// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

const exId = '019ae0c1-2b3c-7d4e-8f50-6172839a4b5c';
const at = '2026-12-03T09:00:00.000Z';
const counts = {
  total: 2,
  pending: 0,
  calling: 1,
  completed: 1,
  voicemail: 0,
  no_answer: 0,
  busy: 0,
  failed: 0,
  opted_out: 0,
  do_not_call: 0,
};
const exampleCampaign = {
  id: exId,
  name: 'December reminders',
  status: 'running' as const,
  counts,
  attempts: 2,
  spentUsd: 0.02,
  pacing: { callsPerMinute: 30, maxConcurrent: 5 },
  objectId: '019ae0c1-2b3c-7d4e-8f50-000000000002',
  createdAt: at,
  startedAt: at,
};

/** What every move (start, pause, resume, cancel) answers besides its own rule. */
const MOVE_RULE = '409 `invalid_state` for a move its status does not allow; emits `campaign_status`.';

export const docs = describeRoutes({
  createCampaign: {
    summary: 'Create a campaign',
    description:
      "Outbound calls to many contacts, paced (calls per minute, calls at once: across every instance together), within business hours in each contact's time zone (its `timezone`, else `schedule.timezone`, else its number's country's zone, else UTC), retried by outcome after a delay, up to a budget. Each call is placed and charged like `POST /api/session/call` and carries `campaign_id`. The definition is also written, encrypted, to your `campaigns` store (`objectId`). 400 for a malformed body or agent; 404 for a number, agent, contact, pathway, persona or knowledge base that is not yours; 409 for a number that cannot place voice calls; 422 `invalid_campaign` for a phone, time zone or schedule that is not valid, `invalid_pathway` for a pathway.",
  },
  listCampaigns: {
    summary: 'List campaigns',
    description: 'Newest first, with their counts and spend.',
  },
  getCampaign: {
    summary: 'Read a campaign',
    description:
      'Its status, counts per contact status, calls placed and spend. Follow it live with `GET /api/events/campaign_status?campaign_id=<id>`.',
  },
  listCampaignContacts: {
    summary: "A campaign's contacts and their attempts",
    description: 'In the order they were given; `status` filters.',
  },
  startCampaign: {
    summary: 'Start a draft campaign',
    description: `draft to running. 402 \`insufficient_funds\` when neither your allowance nor your balance pays one minute to the first contact. ${MOVE_RULE}`,
  },
  pauseCampaign: {
    summary: 'Pause a running campaign',
    description: `running to paused: no new call is placed; calls under way go on. ${MOVE_RULE}`,
  },
  resumeCampaign: {
    summary: 'Resume a paused campaign',
    description: `paused to running (also after it paused itself); 402 as for start. ${MOVE_RULE}`,
  },
  cancelCampaign: {
    summary: 'Cancel a campaign',
    description: `draft, running or paused to cancelled, for good: contacts not yet called stay pending. ${MOVE_RULE}`,
  },
  deleteCampaign: {
    summary: 'Delete a campaign',
    description:
      'Only when it is not running (409 `invalid_state`); its record in your campaigns store and its calls stay.',
  },
  listDoNotCall: {
    summary: 'List your do-not-call numbers',
    description: 'In number order. No outbound call of yours dials a listed number.',
  },
  addDoNotCall: {
    summary: 'List a number as not to be called',
    description:
      'Every outbound call to it is refused from now on: `POST /api/session/call` answers 409 `do_not_call`; a campaign contact ends `do_not_call`, never dialled. Listing it again changes nothing.',
  },
  removeDoNotCall: {
    summary: 'Take a number off the do-not-call list',
    description: 'Outbound calls may dial it again. 404 when it is not listed.',
  },
});

export const examples = {
  campaign: exampleCampaign,
  createCampaignBody: {
    name: 'December reminders',
    agent: {
      name: 'Amy',
      firstMessage: 'Hello {{contact.name}}, this is Amy from the clinic.',
      voicemailMessage: 'Please call us back.',
    },
    fromNumberIds: ['019ae0b0-0000-7000-8000-000000000001'],
    contacts: [
      { name: 'Grace', phone: '+14155550123', timezone: 'America/Los_Angeles' },
      { name: 'Alan', phone: '+442079460000' },
    ],
    schedule: { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' },
    pacing: { callsPerMinute: 30 },
    retry: { maxAttempts: 2, delayMinutes: 60 },
    budgetUsd: 20,
  },
  createCampaign: {
    id: exId,
    status: 'draft' as const,
    objectId: '019ae0c1-2b3c-7d4e-8f50-000000000002',
  },
  listCampaigns: { items: [exampleCampaign] },
  listCampaignContacts: {
    items: [
      {
        index: 0,
        name: 'Grace',
        phone: '+14155550123',
        status: 'completed' as const,
        attempts: [{ sessionId: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07', outcome: 'completed', at }],
      },
    ],
  },
  listDoNotCall: {
    items: [{ phone: '+14155550123', reason: 'asked by email', source: 'api' as const, createdAt: at }],
  },
  addDoNotCall: {
    phone: '+14155550123',
    reason: 'asked by email',
    source: 'api' as const,
    createdAt: at,
  },
  addDoNotCallBody: { phone: '+14155550123', reason: 'asked by email' },
};
