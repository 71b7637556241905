// Personas (spec 4.16): the catalog, external voices and encrypted previews.
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { PersonaService } from './service.js';
import { docs, examples } from './routes.docs.js';

const Persona = Type.Object(
  {
    id: Type.String({ description: '`local-…` for built-in voices, `elevenlabs-<voiceId>` for ElevenLabs voices' }),
    name: Type.String(),
    description: Type.String({ description: 'Spoken by a preview when the payload has no textBase64' }),
    instructions: Type.String({ description: 'Voice and behaviour instructions for an agent using this persona' }),
    settings: Type.Object(
      {
        type: Type.String({ description: 'The speech provider: `local` (espeak-ng, WAV) or `elevenlabs` (MP3)' }),
        voiceId: Type.String({
          description: 'The provider voice: an espeak-ng voice name (`en-us+f3`) or an ElevenLabs voice id',
        }),
        speed: Type.Optional(Type.Integer({ description: 'local: words per minute' })),
        pitch: Type.Optional(Type.Integer({ minimum: 0, maximum: 99, description: 'local: pitch, 0–99' })),
        language: Type.Optional(Type.String({ description: 'local: the language spoken (BCP 47)' })),
        gender: Type.Optional(Type.String({ description: "local: the voice's gender" })),
        modelId: Type.Optional(Type.String({ description: 'elevenlabs: the speech model' })),
        category: Type.Optional(
          Type.Union([Type.String(), Type.Null()], {
            description: "elevenlabs: the voice's category (premade, cloned, …)",
          }),
        ),
        labels: Type.Optional(
          Type.Record(Type.String(), Type.String(), {
            description: "elevenlabs: the voice's labels (gender, age, accent, …)",
          }),
        ),
        previewUrl: Type.Optional(
          Type.Union([Type.String(), Type.Null()], { description: 'elevenlabs: a sample of the voice' }),
        ),
      },
      { additionalProperties: true, description: 'Provider-specific settings' },
    ),
  },
  { title: 'Persona', examples: [examples.persona] },
);

const PersonaList = Type.Array(Persona, { title: 'PersonaList', examples: [examples.personaList] });

const PlayBody = Type.Object(
  {
    server: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The name of your registered server that signed `jwt` (POST /api/servers)',
    }),
    jwt: Type.String({
      minLength: 1,
      maxLength: 65536,
      description:
        'Compact JWS (ES256) signed with that server\'s private key, optionally nested in a compact JWE (ECDH-ES+A256KW, A256GCM, cty "JWT") to the key of GET /api/server. Claims: `use: "persona-preview"`, optional `textBase64` (base64 of at most 1,000 characters), `exp` (at most 10 minutes ahead) and a single-use `jti`.',
    }),
  },
  {
    examples: [examples.playBody],
  },
);

const EncryptedAudio = Type.Object(
  {
    header: Type.Object(
      {
        alg: Type.String(),
        enc: Type.String(),
        cty: Type.String({ description: 'The audio media type' }),
        kid: Type.Optional(Type.String({ description: 'The server the audio is encrypted to' })),
        epk: Type.Object(
          { kty: Type.String(), crv: Type.String(), x: Type.String(), y: Type.String() },
          { additionalProperties: true, description: 'Ephemeral public key (JWK, P-256)' },
        ),
        contentType: Type.String({ description: '`audio/wav` (local) or `audio/mpeg` (ElevenLabs)' }),
      },
      { additionalProperties: true, description: "The JWE's protected header plus contentType" },
    ),
    content: Type.String({
      description:
        "Compact JWE of the audio, encrypted to your server's public key: decrypt it with the server's private key",
    }),
  },
  {
    title: 'EncryptedPersonaAudio',
    examples: [examples.encryptedAudio],
  },
);

const PersonaParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

/** What the persona routes touch. */
export interface PersonaRouteDeps {
  personas: PersonaService;
}

export function personaRoutes(app: App, deps: PersonaRouteDeps) {
  const { personas } = deps;
  app.addHook('onClose', () => personas.close());

  app.get(
    '/api/personas',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['personas'],
        ...docs.listPersonas,
        response: { 200: ok(PersonaList, 'The built-in personas, then the ElevenLabs voices') },
      },
    },
    async () => personas.list(),
  );

  app.get(
    '/api/persona/list-external',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['personas'],
        ...docs.listExternalPersonas,
        response: {
          200: ok(PersonaList, 'The ElevenLabs voices as personas (empty without a key)'),
          ...errorResponses('provider_error'),
        },
      },
    },
    async () => personas.listExternal(),
  );

  app.get(
    '/api/persona/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['personas'],
        ...docs.getPersona,
        params: PersonaParams,
        response: { 200: ok(Persona, 'The persona'), ...errorResponses('not_found', 'provider_error') },
      },
    },
    async (request) => personas.get(request.params.id),
  );

  app.post(
    '/api/persona/:id/play',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['personas'],
        ...docs.playPersona,
        params: PersonaParams,
        body: PlayBody,
        response: {
          200: ok(EncryptedAudio, 'The spoken preview, encrypted to your server'),
          ...errorResponses(
            'invalid_input',
            'invalid_token',
            'not_found',
            'rate_limited',
            'voice_preview_quota_exceeded',
            'provider_error',
            'not_ready',
          ),
        },
      },
    },
    async (request) => personas.play(request.auth!.userId, request.params.id, request.body),
  );
}
