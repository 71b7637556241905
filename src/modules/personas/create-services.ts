// Builds the personas area's service from the voice providers and the data
// plane's signed-payload verifier.
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import type { VoiceProviders } from '../../providers/voice/interface.js';
import type { SignedPayloads } from '../data/signed-payloads.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import { BUILT_IN_PERSONAS } from './catalog.js';
import { PersonaService } from './service.js';

export interface PersonaServiceDeps {
  /** The voice providers previews speak through. */
  providers: { voice: VoiceProviders };
  data: { signedPayloads: SignedPayloads };
  clock: Clock;
  limiter: RateLimiter;
  /** The per-user limits of previews (paid and local). */
  config: Pick<Config, 'rateLimits'>;
}

export function createPersonaServices(deps: PersonaServiceDeps) {
  const { rateLimits } = deps.config;
  const previewLimits = {
    limiter: deps.limiter,
    perUser: rateLimits.voicePreviewPerUser,
    charactersPerUser: rateLimits.voicePreviewCharactersPerUser,
    localPerUser: rateLimits.localVoicePreviewPerUser,
  };
  return {
    personas: new PersonaService(
      deps.providers.voice,
      deps.data.signedPayloads,
      deps.clock,
      BUILT_IN_PERSONAS,
      previewLimits,
    ),
  };
}

export type PersonaServices = ReturnType<typeof createPersonaServices>;
