// Voices for personas and the calendar integration.
import { optional, optionalUrl, section, urlWithDefault } from './declare.js';
import type { Config } from './types.js';

const v = {
  elevenlabsKey: optional(
    'ELEVENLABS_API_KEY',
    'ElevenLabs voices as personas (`elevenlabs-<voiceId>`) and their speech; without it only the built-in local voices (espeak-ng)',
  ),
  elevenlabsBase: urlWithDefault(
    'ELEVENLABS_API_BASE',
    'https://api.elevenlabs.io',
    ['http:', 'https:'],
    'ElevenLabs API origin',
  ),
  calendlyBase: optionalUrl(
    'CALENDLY_API_BASE',
    ['http:', 'https:'],
    'Calendly API origin for integrations; when unset outside production, integrations use the offline sandbox stand-in',
    '`https://api.calendly.com` in production',
  ),
};

export const personasSection = section<Pick<Config, 'elevenlabs' | 'calendly'>>(
  'Personas and integrations',
  v,
  (read, { nodeEnv }) => {
    const elevenlabsKey = read(v.elevenlabsKey);
    const elevenlabsBase = read(v.elevenlabsBase).replace(/\/$/, '');
    // Calendly needs no credentials of the operator (tokens are the users'): the
    // real API is used in production, or anywhere CALENDLY_API_BASE is set.
    const calendlyBaseRaw = read(v.calendlyBase);
    const calendlyBase = (calendlyBaseRaw ?? 'https://api.calendly.com').replace(/\/$/, '');
    return {
      elevenlabs: elevenlabsKey ? { apiKey: elevenlabsKey, apiBase: elevenlabsBase } : null,
      calendly: calendlyBaseRaw || nodeEnv === 'production' ? { apiBase: calendlyBase } : null,
    };
  },
);
