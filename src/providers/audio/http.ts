// The real audio server: POST {AUDIO_SERVER_URL}/calls with the assembled
// call, signed with the shared secret (Standard Webhooks headers), so the
// audio server can verify it came from us the same way we verify its reports.
import { randomUUID } from 'node:crypto';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { bufferResponse, createOperatorHttp } from '../../lib/outbound-http.js';
import { signWebhook } from '../../lib/standard-webhooks.js';
import type { AssembledCall, AudioProvider } from './interface.js';

export interface HttpAudioConfig {
  url: string;
  secret: string;
}

export class HttpAudioProvider implements AudioProvider {
  readonly name = 'audio-server';
  readonly sandbox = false;
  /** The operator's server: private addresses allowed, redirects not followed (docs/decisions/calls.md). */
  private readonly http = createOperatorHttp({ timeoutMs: 15_000, maxBytes: 64 * 1024 });
  constructor(
    private readonly config: HttpAudioConfig,
    private readonly clock: Clock,
  ) {}

  async startCall(sessionId: string, call: AssembledCall, progressUrl: string): Promise<{ providerCallId: string }> {
    // The sandbox carrier's script is not the audio server's business.
    const { sandboxScript: _sandboxOnly, ...sent } = call;
    const body = JSON.stringify({ session_id: sessionId, progress_url: progressUrl, call: sent });
    const headers = signWebhook([this.config.secret], `req_${randomUUID()}`, this.clock.now(), body);
    let res: Response;
    try {
      res = await bufferResponse(
        await this.http(`${this.config.url}/calls`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body,
        }),
      );
    } catch (err) {
      throw new AppError('provider_error', `audio server unreachable: ${(err as Error).message}`);
    }
    const answer = (await res.json().catch(() => ({}))) as { id?: unknown; message?: unknown };
    if (!res.ok)
      throw new AppError(
        'provider_error',
        `audio server refused the call: ${typeof answer.message === 'string' ? answer.message : `HTTP ${res.status}`}`,
      );
    return { providerCallId: typeof answer.id === 'string' ? answer.id : sessionId };
  }

  close(): void {
    void this.http.close();
  }
}
