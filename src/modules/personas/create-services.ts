// Builds the personas area's service from the voice providers and the data
// plane's signed-payload verifier.
import type { Clock } from '../../lib/clock.js';
import type { VoiceProviders } from '../../providers/voice/interface.js';
import type { SignedPayloads } from '../data/signed-payloads.js';
import { BUILT_IN_PERSONAS } from './catalog.js';
import { type PreviewLimits, PersonaService } from './service.js';

export interface PersonaServiceDeps {
  voice: VoiceProviders;
  signedPayloads: SignedPayloads;
  clock: Clock;
  /** Per-user limits of previews (paid and local). */
  previewLimits: PreviewLimits;
}

export function createPersonaServices(deps: PersonaServiceDeps) {
  return {
    personas: new PersonaService(deps.voice, deps.signedPayloads, deps.clock, BUILT_IN_PERSONAS, deps.previewLimits),
  };
}

export type PersonaServices = ReturnType<typeof createPersonaServices>;
