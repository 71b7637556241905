// POST /api/sandbox/calls/inbound: ring one of your own sandbox numbers
// (DESIGN.md "Sandbox carrier"). Mounted only while the sandbox telephony
// provider is active and never in production, like /api/sandbox/outbox; it
// needs your credentials like the other call routes.
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { SandboxScript } from '../../providers/telephony/interface.js';
import type { SandboxInboundCalls } from './sandbox-inbound.js';
import { docs } from './sandbox-routes.docs.js';

/** The sandbox carrier's script, as POST /api/sandbox/calls/inbound and POST /api/session/call take it. */
export const SandboxScriptSchema = Type.Union(
  [
    Type.Literal('default', {
      description:
        'The default caller: "Hello, who is this?", "Can you tell me your opening hours please?", "I would like to book a meeting for next Tuesday.", "No thank you, goodbye."',
    }),
    Type.Literal('voicemail', {
      description: 'An answering machine: a greeting, a beep, then the asynchronous AMD verdict `machine_end_beep`',
    }),
    Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
      minItems: 1,
      maxItems: 20,
      description: "The caller's lines, in order",
    }),
  ],
  { description: "What the sandbox carrier's simulated caller does (default `default`)" },
);

const RingBody = Type.Object(
  {
    numberId: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'One of your sandbox numbers (GET /api/phone-numbers); it answers as its inbound configuration says',
    }),
    from: Type.Optional(
      Type.String({ pattern: '^\\+[1-9]\\d{6,14}$', description: `The caller's number, E.164 (default +12125550142)` }),
    ),
    script: Type.Optional(SandboxScriptSchema),
  },
  {
    additionalProperties: false,
    examples: [
      { numberId: '019ab3f0-1d2c-7e41-8a9b-3c4d5e6f7a80' },
      {
        numberId: '019ab3f0-1d2c-7e41-8a9b-3c4d5e6f7a80',
        from: '+14155550177',
        script: ['Hi, what are your opening hours?', 'Thanks, bye.'],
      },
    ],
  },
);

export function sandboxCallRoutes(app: App, inbound: SandboxInboundCalls | null) {
  if (!inbound) return;
  app.post(
    '/api/sandbox/calls/inbound',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['sandbox'],
        ...docs.ringSandboxNumber,
        body: RingBody,
        response: {
          202: ok(
            Type.Object({ sessionId: Type.String({ description: 'The call session the webhook opened' }) }),
            'The number was rung; the call goes on (or was refused) as its session shows',
            { sessionId: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07' },
          ),
          ...errorResponses('not_found', 'conflict', 'provider_error'),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as { numberId: string; from?: string; script?: SandboxScript };
      return reply.status(202).send(await inbound.ring(request.auth!.userId, body));
    },
  );
}
