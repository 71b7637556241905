// Call sessions (spec 4.14): a registered server signs the call it wants
// (signCallRequest), the client starts it (CallsApi.start) and follows its
// `call_status` events with client.events.subscribe('call_status', { filter: { session_id } }).
import type { Answer, Body } from './api-types.js';
import { errorFromResponse, type HttpCore } from './http.js';
import type { HttpTool, PathwayDocument } from './pathways.js';
import { type ServerPrivateKey, type ServiceKey, signServerPayload } from './personas.js';

/** What a call-session payload holds (besides `use`, `exp`, `jti`, which signCallRequest adds). */
export interface CallRequest {
  agent: {
    name: string;
    personaId?: string;
    instructions?: string;
    firstMessage?: string /** Spoken after an answering machine's beep (the built-in voice agent); none: it hangs up. */;
    voicemailMessage?: string;
  };
  contact: { name: string; phone: string; fields?: Record<string, string> };
  humanAgents?: Array<{ name: string; phone: string }>;
  type: 'prompt' | 'pathway';
  prompt?: string;
  /** A pathway document (build one with pathway()), `{ id }` of your conversational-pathways store (pathwayRef), or the old `{ name?, steps }` list. */
  pathway?: PathwayDocument | { id: string } | { name?: string; steps: string[] };
  /** Filled into `{{name}}` templates (instructions, first message, pathway texts, tool bodies); at most 100. */
  variables?: Record<string, string | number | boolean>;
  /** Custom HTTP tools of this call (DESIGN.md "Custom tools and call variables"). */
  tools?: HttpTool[];
  knowledgeBase?: { id: string };
  integrations?: string[];
  phoneNumberId?: string;
  webhook?: string;
}

export interface SignCallOptions {
  /** Lifetime in seconds, 1–600 (default 300). */
  expiresIn?: number;
  /** Single-use id; a random UUID when omitted. */
  jti?: string;
}

/**
 * Signs a call request with a registered server's private key (JWS ES256) and,
 * when `servicePublicKey` (GET /api/server) is given, nests it in a JWE
 * (ECDH-ES+A256KW, A256GCM, cty JWT) to the service, so the contact's details
 * are readable only by the service. Send it as `jwt` with the server's name to
 * POST /api/session/call. Each token is accepted once.
 */
export function signCallRequest(
  serverPrivateKey: ServerPrivateKey,
  payload: CallRequest,
  servicePublicKey?: ServiceKey,
  options: SignCallOptions = {},
): Promise<string> {
  return signServerPayload(
    serverPrivateKey,
    { ...payload, use: 'call-session' },
    { ...options, ...(servicePublicKey ? { encryptTo: servicePublicKey } : {}) },
  );
}

export class CallsApi {
  constructor(private readonly http: HttpCore) {}

  /**
   * POST /api/session/call → the new session's id (the `X-Session-Id` header of the 204). `script` (sandbox
   * carrier only) is what its simulated caller does: `default`, `voicemail` or the caller's lines in order.
   */
  async start(
    input: { server: string; jwt: string; script?: 'default' | 'voicemail' | string[] },
    options: { idempotencyKey?: string } = {},
  ): Promise<{ sessionId: string }> {
    const response = await this.http.send(this.http.url('/api/session/call'), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
      },
      body: JSON.stringify({
        server: input.server,
        jwt: input.jwt,
        ...(input.script !== undefined ? { script: input.script } : {}),
      }),
    });
    if (!response.ok) throw await errorFromResponse(response);
    const sessionId = response.headers.get('x-session-id');
    if (!sessionId) throw new Error('POST /api/session/call answered without X-Session-Id');
    return { sessionId };
  }

  /**
   * POST /api/calls/web: a free test call with your agent from a browser (or a
   * script). Pass the answer to startBrowserCall (microphone and speakers) or
   * playWavCall (WAV files in, the agent's audio out); open its `url` within 60 s.
   */
  startWeb(input: Body<'/api/calls/web', 'post'>): Promise<Answer<'/api/calls/web', 'post'>> {
    return this.http.request('post', '/api/calls/web', { body: input });
  }

  /** GET /api/calls: your calls, newest first; pass `nextBefore` as `before` for the next page. */
  list(query: { before?: string; limit?: number } = {}): Promise<Answer<'/api/calls', 'get'>> {
    return this.http.request('get', '/api/calls', { query });
  }

  /** GET /api/calls/{id}: status, direction, numbers, times; once ended the transcript, tool calls, per-turn latency and `recordingUrl`. */
  get(id: string): Promise<Answer<'/api/calls/{id}', 'get'>> {
    return this.http.request('get', '/api/calls/{id}', { params: { id } });
  }

  /** GET /api/calls/{id}/recording: the two-channel WAV (caller left, agent right), as bytes. */
  async recording(id: string): Promise<Uint8Array> {
    const response = await this.http.send(this.http.url('/api/calls/{id}/recording', { id }), { method: 'GET' });
    if (!response.ok) throw await errorFromResponse(response);
    return new Uint8Array(await response.arrayBuffer());
  }

  /** GET /api/session/temporary: the call types of temporary test calls. */
  temporaryTypes(): Promise<Answer<'/api/session/temporary', 'get'>> {
    return this.http.request('get', '/api/session/temporary', {});
  }

  /** PUT /api/session/temporary: sends a code by SMS to `phone`; keep the returned key for startTemporary. */
  requestTemporary(
    input: Body<'/api/session/temporary', 'put'>,
    options: { idempotencyKey?: string } = {},
  ): Promise<Answer<'/api/session/temporary', 'put'>> {
    return this.http.request('put', '/api/session/temporary', { body: input, headers: idempotency(options) });
  }

  /** POST /api/session/temporary: the key, the SMS code and where to email the summary → the session id. */
  startTemporary(
    input: Body<'/api/session/temporary', 'post'>,
    options: { idempotencyKey?: string } = {},
  ): Promise<Answer<'/api/session/temporary', 'post'>> {
    return this.http.request('post', '/api/session/temporary', { body: input, headers: idempotency(options) });
  }
}

const idempotency = (options: { idempotencyKey?: string }): Record<string, string> =>
  options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {};
