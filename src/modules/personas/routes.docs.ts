// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

const example = {
  id: 'local-amy',
  name: 'Amy',
  description: 'Hi, I am Amy. I answer the phone for your team, warmly and to the point.',
  instructions: 'You are Amy, a friendly front-desk assistant.',
  settings: { type: 'local', voiceId: 'en-us+f3', speed: 165, pitch: 60, language: 'en-US', gender: 'female' },
};

export const docs = describeRoutes({
  listPersonas: {
    summary: 'Every persona: the built-in voices, then ElevenLabs voices when configured',
    description:
      'An addition to the spec. Built-in personas are spoken locally by espeak-ng; ElevenLabs voices appear when ELEVENLABS_API_KEY is set and accepted.',
  },
  listExternalPersonas: {
    summary: "The external voice provider's voices as personas",
    description:
      'ElevenLabs voices (GET /v1/voices) converted to personas. An empty list when no ElevenLabs key is configured or ElevenLabs refuses it; 502 when ElevenLabs cannot be reached.',
  },
  getPersona: {
    summary: 'One persona',
    description:
      'A built-in persona (`local-amy`, …) or an ElevenLabs voice (`elevenlabs-<voiceId>`); 404 for an unknown id.',
  },
  playPersona: {
    summary: "Speak a preview, encrypted to your server's public key",
    description:
      "The `jwt` is verified with the public key of your registered server `server` and its `jti` is consumed. The text (textBase64, or the persona description) is spoken by the provider the persona's settings.type selects, and answered as a compact JWE to that server. 400 `invalid_token` for a jwt that is forged, expired, replayed, unsigned, for another use or more than 10 minutes ahead; 400 `invalid_input` for bad textBase64; 404 for an unknown persona or a server you have not registered; 429 `rate_limited` past the per-user rate of paid previews (`RATE_LIMIT_VOICE_PREVIEW_PER_USER`) or of local ones (`RATE_LIMIT_LOCAL_VOICE_PREVIEW_PER_USER`), or, with `Retry-After: 2`, when local speech has no spare room for previews (the speech of calls goes first; at most 4 local previews wait or run at once, 2 per account), 429 `voice_preview_quota_exceeded` past the daily characters of paid (ElevenLabs) previews (`RATE_LIMIT_VOICE_PREVIEW_CHARACTERS_PER_USER`; local previews do not count); 502 when the speech provider fails.",
  },
});

export const examples = {
  persona: example,
  personaList: [example],
  playBody: {
    server: 'my-server',
    jwt: 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2UiOiJwZXJzb25hLXByZXZpZXciLCJ0ZXh0QmFzZTY0IjoiU0dWc2JHOGdkR2hsY21VPSIsImV4cCI6MTc5NTQ2NDYwMCwianRpIjoiN2Y5YzJhNGUtcHJldmlldy0xIn0.2bV8kQ…',
  },
  encryptedAudio: {
    header: {
      alg: 'ECDH-ES+A256KW',
      enc: 'A256GCM',
      cty: 'audio/wav',
      kid: 'my-server',
      epk: { kty: 'EC', crv: 'P-256', x: '…', y: '…' },
      contentType: 'audio/wav',
    },
    content: 'eyJhbGciOiJFQ0RILUVTK0EyNTZLVyIs….….….….…',
  },
};
