// ElevenLabs: GET /v1/voices (the account's voices),
// POST /v1/text-to-speech/{voice_id} (MP3, persona previews) and
// POST /v1/text-to-speech/{voice_id}/stream (μ-law 8 kHz as it is made, live
// calls), authenticated with the `xi-api-key` header. ELEVENLABS_API_BASE
// points it at a local server in tests.
import { AppError } from '../../http/errors.js';
import { bufferResponse, createOperatorHttp } from '../../lib/outbound-http.js';
import { ProviderFailure } from '../failure.js';
import type { ExternalVoice, ExternalVoiceProvider, SynthesizedAudio, VoiceSettings } from './interface.js';

export interface ElevenLabsConfig {
  apiKey: string;
  /** https://api.elevenlabs.io, or a local server in tests. */
  apiBase: string;
}

export const DEFAULT_ELEVENLABS_MODEL = 'eleven_multilingual_v2';
/** Live calls default to ElevenLabs' low-latency model (a persona's modelId still wins). */
export const DEFAULT_ELEVENLABS_CALL_MODEL = 'eleven_flash_v2_5';
const OUTPUT_FORMAT = 'mp3_44100_128';

interface VoiceResource {
  voice_id?: unknown;
  name?: unknown;
  description?: unknown;
  category?: unknown;
  labels?: unknown;
  preview_url?: unknown;
}

/** Longest wait for an answer, and largest answer (a long text's MP3 is a few MB). */
const TIMEOUT_MS = 30_000;
const MAX_BYTES = 50 * 1024 * 1024;

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value : null);

export class ElevenLabsVoiceProvider implements ExternalVoiceProvider {
  readonly name = 'elevenlabs';
  private readonly http = createOperatorHttp({
    timeoutMs: TIMEOUT_MS,
    maxBytes: MAX_BYTES,
    userAgent: 'workspace-api',
  });
  /** Live calls: a short wait for the first byte and between bytes, a minute for one sentence's whole stream. */
  private readonly streamHttp = createOperatorHttp({
    timeoutMs: 10_000,
    deadlineMs: 60_000,
    maxBytes: 8 * 1024 * 1024,
    userAgent: 'workspace-api',
  });
  constructor(private readonly config: ElevenLabsConfig) {}

  async listVoices(): Promise<ExternalVoice[] | null> {
    const res = await this.request('GET', '/v1/voices', undefined, 'application/json');
    if (res.status === 401 || res.status === 403) return null;
    if (!res.ok) throw new AppError('provider_error', `ElevenLabs answered HTTP ${res.status} to the voice list`);
    const body = (await res.json().catch(() => null)) as { voices?: VoiceResource[] } | null;
    if (!body || !Array.isArray(body.voices))
      throw new AppError('provider_error', 'ElevenLabs answered the voice list with an unexpected body');
    const voices: ExternalVoice[] = [];
    for (const v of body.voices) {
      const voiceId = text(v.voice_id);
      if (!voiceId || !/^[A-Za-z0-9_-]{1,64}$/.test(voiceId)) continue;
      const labels: Record<string, string> = {};
      if (v.labels && typeof v.labels === 'object')
        for (const [k, l] of Object.entries(v.labels)) if (typeof l === 'string') labels[k] = l;
      voices.push({
        voiceId,
        name: text(v.name) ?? voiceId,
        description: text(v.description),
        category: text(v.category),
        labels,
        previewUrl: text(v.preview_url),
      });
    }
    return voices;
  }

  async synthesize(input: string, settings: VoiceSettings): Promise<SynthesizedAudio> {
    const modelId = typeof settings.modelId === 'string' ? settings.modelId : DEFAULT_ELEVENLABS_MODEL;
    const res = await this.request(
      'POST',
      `/v1/text-to-speech/${encodeURIComponent(settings.voiceId)}?output_format=${OUTPUT_FORMAT}`,
      JSON.stringify({ text: input, model_id: modelId }),
      'audio/mpeg',
    );
    if (!res.ok) {
      const detail = (await res.json().catch(() => null)) as { detail?: { message?: string } | string } | null;
      const message = typeof detail?.detail === 'string' ? detail.detail : detail?.detail?.message;
      throw new AppError(
        'provider_error',
        `ElevenLabs refused the speech request (HTTP ${res.status}${message ? `: ${message}` : ''})`,
      );
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.length === 0) throw new AppError('provider_error', 'ElevenLabs answered with no audio');
    return { bytes, contentType: 'audio/mpeg' };
  }

  /**
   * Live calls: the speech of `input` as raw μ-law 8 kHz bytes (output_format=ulaw_8000, what a phone line
   * carries), yielded as they arrive. Throws ProviderFailure: a refusal (401, 404 voice, 422) is not
   * retryable, 429 and 5xx, a dropped or silent stream are.
   */
  async *streamUlaw(input: string, voiceId: string, modelId: string, signal: AbortSignal): AsyncGenerator<Uint8Array> {
    const path = `/v1/text-to-speech/${encodeURIComponent(voiceId)}/stream?output_format=ulaw_8000`;
    let res: Response;
    try {
      res = await this.streamHttp(`${this.config.apiBase}${path}`, {
        method: 'POST',
        headers: { 'xi-api-key': this.config.apiKey, accept: '*/*', 'content-type': 'application/json' },
        body: JSON.stringify({ text: input, model_id: modelId }),
        signal,
      });
    } catch (err) {
      throw new ProviderFailure(this.name, `unreachable: ${(err as Error).message}`);
    }
    if (!res.ok || !res.body) {
      const detail = (await res.json().catch(() => null)) as { detail?: { message?: string } | string } | null;
      const message = typeof detail?.detail === 'string' ? detail.detail : detail?.detail?.message;
      throw new ProviderFailure(
        this.name,
        `refused the speech request (HTTP ${res.status}${message ? `: ${message.slice(0, 200)}` : ''})`,
        res.status === 429 || res.status >= 500,
      );
    }
    const reader = res.body.getReader();
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (err) {
          throw new ProviderFailure(this.name, `the speech stream broke: ${(err as Error).message}`);
        }
        if (chunk.done) return;
        if (chunk.value.byteLength) yield chunk.value;
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  /** The one HTTP call of this adapter, through the shared outbound client (ELEVENLABS_API_BASE is the operator's). */
  private async request(
    method: 'GET' | 'POST',
    path: string,
    body: string | undefined,
    accept: string,
  ): Promise<Response> {
    try {
      const res = await this.http(`${this.config.apiBase}${path}`, {
        method,
        headers: { 'xi-api-key': this.config.apiKey, accept, ...(body ? { 'content-type': 'application/json' } : {}) },
        body,
      });
      return await bufferResponse(res);
    } catch (err) {
      throw new AppError('provider_error', `ElevenLabs unreachable: ${(err as Error).message}`);
    }
  }
}
