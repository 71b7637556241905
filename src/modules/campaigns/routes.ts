// Campaigns and the do-not-call list (DESIGN.md "Campaigns"): schemas and thin handlers.
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { DAYS } from './business-hours.js';
import { type CampaignInput, RETRY_OUTCOMES } from './definition.js';
import type { DoNotCallService } from './do-not-call-service.js';
import type { CampaignService } from './service.js';
import { CONTACT_STATUSES } from './tables.js';
import { docs, examples } from './routes.docs.js';

const tags = ['campaigns'];
const lit = <T extends string>(values: readonly T[]) => Type.Unsafe<T>(Type.Union(values.map((v) => Type.Literal(v))));

const ContactInput = Type.Union([
  Type.Object(
    {
      contactId: Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'An object of your contacts store: `{ name, phone, fields?, timezone? }`',
      }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      phone: Type.String({ minLength: 1, maxLength: 32, description: 'E.164' }),
      fields: Type.Optional(
        Type.Record(
          Type.String({ maxLength: 100 }),
          Type.Union([Type.String({ maxLength: 2000 }), Type.Array(Type.String({ maxLength: 500 }), { maxItems: 50 })]),
          {
            description:
              'Strings the agent knows (`{{contact.fields.X}}`); `sandboxScript`, a list of lines, is what a sandbox callee says',
          },
        ),
      ),
      timezone: Type.Optional(
        Type.String({ maxLength: 64, description: 'IANA zone of the contact, e.g. Europe/Paris' }),
      ),
    },
    { additionalProperties: false },
  ),
]);

const CreateCampaignBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    agentId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'An object of your agents store' }),
    ),
    agent: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'An agent record (DESIGN "Voice agent")' }),
    ),
    pathwayId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'An object of your conversational-pathways store' }),
    ),
    pathway: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'A pathway document' })),
    fromNumberIds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: 50,
      description: 'Your voice-capable numbers, used in turn',
    }),
    contacts: Type.Array(ContactInput, { minItems: 1, maxItems: 10_000 }),
    schedule: Type.Optional(
      Type.Object(
        {
          timezone: Type.Optional(Type.String({ maxLength: 64 })),
          days: Type.Optional(Type.Array(lit(DAYS), { maxItems: 7 })),
          from: Type.Optional(Type.String({ pattern: '^\\d{2}:\\d{2}$', description: 'HH:MM local time' })),
          to: Type.Optional(Type.String({ pattern: '^\\d{2}:\\d{2}$', description: 'HH:MM local time' })),
          startAt: Type.Optional(Type.String({ format: 'date-time' })),
          endAt: Type.Optional(Type.String({ format: 'date-time' })),
        },
        { additionalProperties: false },
      ),
    ),
    pacing: Type.Optional(
      Type.Object(
        {
          callsPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, default: 10 })),
          maxConcurrent: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 1000, description: "Default: the account's call concurrency" }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    retry: Type.Optional(
      Type.Object(
        {
          maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, default: 2 })),
          delayMinutes: Type.Optional(Type.Number({ minimum: 0, maximum: 10_080, default: 60 })),
          on: Type.Optional(
            Type.Array(lit(RETRY_OUTCOMES), { maxItems: 4, description: 'Default: no_answer, busy, failed' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    voicemail: Type.Optional(lit(['hang_up', 'leave_message'] as const)),
    budgetUsd: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
    webhook: Type.Optional(
      Type.String({ maxLength: 2000, description: 'Receives every campaign_status payload, signed' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [examples.createCampaignBody],
  },
);

const Counts = Type.Unsafe<Record<'total' | (typeof CONTACT_STATUSES)[number], number>>(
  Type.Object(Object.fromEntries([['total', Type.Integer()], ...CONTACT_STATUSES.map((s) => [s, Type.Integer()])])),
);
const Campaign = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: lit(['draft', 'running', 'paused', 'completed', 'cancelled'] as const),
  reason: Type.Optional(
    Type.String({
      description: 'insufficient_funds, budget_reached or schedule_ended when it paused or ended by itself',
    }),
  ),
  counts: Counts,
  attempts: Type.Integer({ description: 'Calls placed' }),
  spentUsd: Type.Number({ description: 'What its ended calls were charged' }),
  budgetUsd: Type.Optional(Type.Number()),
  pacing: Type.Object({ callsPerMinute: Type.Integer(), maxConcurrent: Type.Integer() }),
  objectId: Type.Optional(Type.String({ description: 'The definition in your campaigns store' })),
  createdAt: Type.String({ format: 'date-time' }),
  startedAt: Type.Optional(Type.String({ format: 'date-time' })),
  endedAt: Type.Optional(Type.String({ format: 'date-time' })),
});
const CampaignList = Type.Object({
  items: Type.Array(Campaign),
  next: Type.Optional(Type.String({ description: 'Pass as `before` for the next page' })),
});
const ContactItem = Type.Object({
  index: Type.Integer(),
  contactId: Type.Optional(Type.String()),
  name: Type.String(),
  phone: Type.String(),
  status: lit(CONTACT_STATUSES),
  attempts: Type.Array(
    Type.Object({
      sessionId: Type.String(),
      outcome: Type.Optional(Type.String()),
      at: Type.String({ format: 'date-time' }),
    }),
  ),
  nextAttemptAt: Type.Optional(Type.String({ format: 'date-time' })),
});
const ContactPage = Type.Object({
  items: Type.Array(ContactItem),
  next: Type.Optional(Type.String({ description: 'Pass as `cursor` for the next page' })),
});
const Created = Type.Object({ id: Type.String(), status: Type.Literal('draft'), objectId: Type.String() });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

const Listing = Type.Object({
  phone: Type.String(),
  reason: Type.Optional(Type.String()),
  source: lit(['api', 'opt_out'] as const),
  sessionId: Type.Optional(Type.String({ description: 'The call in which the caller opted out' })),
  createdAt: Type.String({ format: 'date-time' }),
});
const ListingPage = Type.Object({
  items: Type.Array(Listing),
  next: Type.Optional(Type.String({ description: 'Pass as `after` for the next page' })),
});

export interface CampaignRouteDeps {
  campaigns: CampaignService;
  doNotCall: DoNotCallService;
}

export function campaignRoutes(app: App, deps: CampaignRouteDeps) {
  const { campaigns, doNotCall } = deps;

  app.post(
    '/api/campaigns',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.createCampaign,
        body: CreateCampaignBody,
        response: {
          201: ok(Created, 'The campaign, a draft', examples.createCampaign),
          ...errorResponses('invalid_input', 'not_found', 'conflict', 'invalid_campaign', 'invalid_pathway'),
        },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await campaigns.create(request.auth!.userId, request.body as CampaignInput)),
  );

  app.get(
    '/api/campaigns',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.listCampaigns,
        querystring: Type.Object({
          before: Type.Optional(Type.String({ maxLength: 100 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
        }),
        response: { 200: ok(CampaignList, 'Your campaigns', examples.listCampaigns) },
      },
    },
    async (request) =>
      campaigns.list(request.auth!.userId, { before: request.query.before, limit: request.query.limit ?? 50 }),
  );

  app.get(
    '/api/campaigns/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.getCampaign,
        params: IdParams,
        response: { 200: ok(Campaign, 'The campaign', examples.campaign), ...errorResponses('not_found') },
      },
    },
    async (request) => campaigns.get(request.auth!.userId, request.params.id),
  );

  app.get(
    '/api/campaigns/:id/contacts',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.listCampaignContacts,
        params: IdParams,
        querystring: Type.Object({
          status: Type.Optional(lit(CONTACT_STATUSES)),
          cursor: Type.Optional(Type.String({ maxLength: 20 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
        }),
        response: {
          200: ok(ContactPage, 'One page of contacts', examples.listCampaignContacts),
          ...errorResponses('invalid_input', 'not_found'),
        },
      },
    },
    async (request) =>
      campaigns.contacts(request.auth!.userId, request.params.id, {
        status: request.query.status,
        cursor: request.query.cursor,
        limit: request.query.limit ?? 100,
      }),
  );

  const moves = {
    start: docs.startCampaign,
    pause: docs.pauseCampaign,
    resume: docs.resumeCampaign,
    cancel: docs.cancelCampaign,
  } as const;
  for (const move of ['start', 'pause', 'resume', 'cancel'] as const) {
    app.post(
      `/api/campaigns/:id/${move}`,
      {
        config: { auth: 'verified' },
        schema: {
          tags,
          ...moves[move],
          params: IdParams,
          response: {
            200: ok(Campaign, 'The campaign after the move', examples.campaign),
            ...errorResponses(
              'not_found',
              'invalid_state',
              ...(move === 'start' || move === 'resume' ? (['insufficient_funds'] as const) : []),
            ),
          },
        },
      },
      async (request) => campaigns.move(request.auth!.userId, request.params.id, move),
    );
  }

  app.delete(
    '/api/campaigns/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.deleteCampaign,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses('not_found', 'invalid_state') },
      },
    },
    async (request, reply) => {
      await campaigns.delete(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/do-not-call',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.listDoNotCall,
        querystring: Type.Object({
          after: Type.Optional(Type.String({ maxLength: 32 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
        }),
        response: {
          200: ok(ListingPage, 'Listed numbers', examples.listDoNotCall),
        },
      },
    },
    async (request) =>
      doNotCall.list(request.auth!.userId, { after: request.query.after, limit: request.query.limit ?? 100 }),
  );

  app.put(
    '/api/do-not-call',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.addDoNotCall,
        body: Type.Object(
          {
            phone: Type.String({ minLength: 1, maxLength: 32, description: 'E.164' }),
            reason: Type.Optional(Type.String({ maxLength: 500 })),
          },
          { additionalProperties: false, examples: [examples.addDoNotCallBody] },
        ),
        response: {
          200: ok(Listing, 'The listing', examples.addDoNotCall),
          ...errorResponses('invalid_input'),
        },
      },
    },
    async (request) => doNotCall.add(request.auth!.userId, request.body),
  );

  app.delete(
    '/api/do-not-call/:phone',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.removeDoNotCall,
        params: Type.Object({ phone: Type.String({ minLength: 1, maxLength: 32, description: 'E.164 (+ as %2B)' }) }),
        response: { 204: Type.Null({ description: 'Removed' }), ...errorResponses('invalid_input', 'not_found') },
      },
    },
    async (request, reply) => {
      await doNotCall.remove(request.auth!.userId, request.params.phone);
      return reply.status(204).send(null);
    },
  );
}
