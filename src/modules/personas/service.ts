// Personas (spec 4.16, 2.15): the built-in catalog, the external provider's
// voices, and previews spoken by the provider `settings.type` selects and
// encrypted to the caller's registered server.
import { AppError, invalidInput } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { ExternalVoice, SpeechProvider, VoiceProviders, VoiceSettings } from '../../providers/voice/interface.js';
import { DEFAULT_ELEVENLABS_MODEL } from '../../providers/voice/elevenlabs.js';
import type { RateLimitRule } from '../../config.js';
import type { EncryptedAnswer, SignedPayloads } from '../data/signed-payloads.js';
import type { RateLimiter } from '../platform/rate-limiter.js';

/** Per-user limits of previews: a rate and daily characters for a paid provider, a rate of its own for local speech. */
export interface PreviewLimits {
  limiter: RateLimiter;
  perUser: RateLimitRule;
  charactersPerUser: RateLimitRule;
  /** Local (espeak-ng) previews: free, but they share the process's speech queue with calls. */
  localPerUser: RateLimitRule;
}

export interface Persona {
  id: string;
  name: string;
  description: string;
  instructions: string;
  settings: VoiceSettings;
}

export interface PlayInput {
  server: string;
  jwt: string;
}

/** The `use` claim of a preview payload. */
export const PREVIEW_USE = 'persona-preview';
/** Longest text a preview speaks, in characters. */
export const MAX_PREVIEW_CHARACTERS = 1000;
const EXTERNAL_PREFIX = 'elevenlabs-';
/** How long one instance reuses the external voice list. */
const EXTERNAL_CACHE_MS = 60_000;

export class PersonaService {
  private externalCache: { at: number; personas: Persona[] } | null = null;

  constructor(
    private readonly voice: VoiceProviders,
    private readonly signedPayloads: SignedPayloads,
    private readonly clock: Clock,
    private readonly catalog: readonly Persona[],
    private readonly limits: PreviewLimits | null = null,
  ) {}

  /** Built-in personas, then the external provider's (none when it is not configured, refuses the key or cannot be reached). */
  async list(): Promise<Persona[]> {
    const external = await this.listExternal().catch(() => []);
    return [...this.catalog, ...external];
  }

  /** The external provider's voices as personas; [] without a key or when the key is refused. */
  async listExternal(): Promise<Persona[]> {
    const provider = this.voice.external;
    if (!provider) return [];
    const now = this.clock.now();
    if (this.externalCache && now - this.externalCache.at < EXTERNAL_CACHE_MS) return this.externalCache.personas;
    const voices = await provider.listVoices();
    const personas = (voices ?? []).map(externalPersona);
    this.externalCache = { at: now, personas };
    return personas;
  }

  async get(id: string): Promise<Persona> {
    const builtIn = this.catalog.find((p) => p.id === id);
    if (builtIn) return builtIn;
    if (id.startsWith(EXTERNAL_PREFIX) && this.voice.external) {
      const found = (await this.listExternal()).find((p) => p.id === id);
      if (found) return found;
    }
    throw new AppError('not_found', `persona "${id}" not found`);
  }

  /**
   * Speaks a preview: the payload (signed by the caller's server `server`)
   * holds { use: "persona-preview", textBase64? }; the answer is the audio
   * encrypted to that server's public key.
   */
  async play(userId: string, id: string, input: PlayInput): Promise<EncryptedAnswer> {
    const persona = await this.get(id);
    const speaker = this.providerFor(persona);
    let text = persona.description;
    const { serverPublicKey } = await this.signedPayloads.verify(userId, input.server, input.jwt, {
      use: PREVIEW_USE,
      validate: (claims) => {
        if (claims.textBase64 !== undefined) text = decodePreviewText(claims.textBase64);
      },
    });
    // Limits count after the payload verified, so a forged or replayed one costs nothing. A paid preview counts
    // against the user's rate and daily characters (when asked, whether the provider then succeeds or not); a local
    // one against a rate of its own, and in the speech queue it waits behind calls, a few per account at most.
    if (this.limits && speaker === this.voice.local) {
      await this.limits.limiter.consume(`local-voice-preview:user:${userId}`, this.limits.localPerUser);
    } else if (this.limits) {
      await this.limits.limiter.consume(`voice-preview:user:${userId}`, this.limits.perUser);
      await this.limits.limiter.consumeAmount(
        `voice-preview-chars:user:${userId}`,
        [...text].length,
        this.limits.charactersPerUser,
        'voice_preview_quota_exceeded',
        'daily characters of paid voice previews used up',
      );
    }
    const audio = await speaker.synthesize(text, persona.settings, { priority: 'preview', account: userId });
    return this.signedPayloads.encryptTo(serverPublicKey, audio.bytes, audio.contentType, input.server);
  }

  /** Stops the local speech worker (app shutdown). */
  async close(): Promise<void> {
    await this.voice.local.close?.();
  }

  private providerFor(persona: Persona): SpeechProvider {
    if (persona.settings.type === 'local') return this.voice.local;
    if (persona.settings.type === 'elevenlabs' && this.voice.external) return this.voice.external;
    throw new AppError(
      'not_found',
      `no speech provider "${persona.settings.type}" is configured for persona "${persona.id}"`,
    );
  }
}

/** textBase64: base64 (standard or URL-safe) of 1–1,000 characters of UTF-8 text. */
export function decodePreviewText(value: unknown): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value) || value.length === 0)
    throw invalidInput('textBase64 must be a non-empty base64 string');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(
      Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64'),
    );
  } catch {
    throw invalidInput('textBase64 must encode UTF-8 text');
  }
  text = text.trim();
  if (text.length === 0) throw invalidInput('textBase64 must encode some text');
  if ([...text].length > MAX_PREVIEW_CHARACTERS)
    throw invalidInput(`textBase64 must encode at most ${MAX_PREVIEW_CHARACTERS} characters`);
  return text;
}

function externalPersona(voice: ExternalVoice): Persona {
  const traits = ['gender', 'age', 'accent', 'description', 'use_case', 'use case']
    .map((k) => voice.labels[k])
    .filter(Boolean);
  const description =
    voice.description ?? (traits.length ? `${voice.name}: ${traits.join(', ')}` : `${voice.name}, an ElevenLabs voice`);
  return {
    id: `${EXTERNAL_PREFIX}${voice.voiceId}`,
    name: voice.name,
    description,
    instructions: `You are ${voice.name}. Speak naturally and keep your answers short.`,
    settings: {
      type: 'elevenlabs',
      voiceId: voice.voiceId,
      modelId: DEFAULT_ELEVENLABS_MODEL,
      category: voice.category,
      labels: voice.labels,
      previewUrl: voice.previewUrl,
    },
  };
}
