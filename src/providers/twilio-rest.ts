// The one Twilio REST client every Twilio adapter uses (SMS codes, telephony):
// form-encoded requests under /2010-04-01/Accounts/{AccountSid}, HTTP Basic
// auth with the account SID and auth token, Twilio's error JSON turned into
// TwilioApiError. Credentials come from config.twilio (TWILIO_* variables).
import { bufferResponse, createOperatorHttp } from '../lib/outbound-http.js';

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** https://api.twilio.com, or a local server in tests (TWILIO_API_BASE). */
  apiBase: string;
}

/** A refusal answered by Twilio (`status` HTTP, `code` Twilio's error code), or `status` 0 when unreachable. */
export class TwilioApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | null,
    message: string,
  ) {
    super(message);
    this.name = 'TwilioApiError';
  }
}

/** Form parameters; a list repeats its key, as Twilio's own libraries send them (StatusCallbackEvent). */
export type TwilioParams = Record<string, string | string[] | undefined>;

export class TwilioRestClient {
  private readonly authorization: string;
  private readonly http = createOperatorHttp({ timeoutMs: 10_000, maxBytes: 5 * 1024 * 1024 });
  constructor(private readonly credentials: TwilioCredentials) {
    this.authorization = `Basic ${Buffer.from(`${credentials.accountSid}:${credentials.authToken}`).toString('base64')}`;
  }

  /** Calls `{apiBase}/2010-04-01/Accounts/{sid}{path}`; GET parameters go in the query, POST parameters in the form body. */
  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, params: TwilioParams = {}): Promise<T> {
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(params))
      for (const v of value === undefined ? [] : Array.isArray(value) ? value : [value]) form.append(key, v);
    let url = `${this.credentials.apiBase}/2010-04-01/Accounts/${encodeURIComponent(this.credentials.accountSid)}${path}`;
    if (method !== 'POST' && [...form.keys()].length) url += `?${form}`;
    let res: Response;
    try {
      res = await bufferResponse(
        await this.http(url, {
          method,
          headers: {
            authorization: this.authorization,
            ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
          body: method === 'POST' ? form : undefined,
        }),
      );
    } catch (err) {
      throw new TwilioApiError(0, null, `Twilio unreachable: ${(err as Error).message}`);
    }
    if (res.status === 204) return undefined as T;
    const body = (await res.json().catch(() => ({}))) as { message?: string; code?: number };
    if (!res.ok)
      throw new TwilioApiError(
        res.status,
        typeof body.code === 'number' ? body.code : null,
        body.message ?? `HTTP ${res.status}`,
      );
    return body as T;
  }

  /**
   * POST /Messages.json (an SMS, with a delivery-status callback when given):
   * the message's sid and first status. An answer without a sid is a failure
   * of the provider (status 502).
   */
  async sendMessage(message: {
    from: string;
    to: string;
    body: string;
    statusCallbackUrl?: string;
  }): Promise<{ sid: string; status: string }> {
    const body = await this.request<{ sid?: string; status?: string }>('POST', '/Messages.json', {
      From: message.from,
      To: message.to,
      Body: message.body,
      StatusCallback: message.statusCallbackUrl,
    });
    if (!body?.sid) throw new TwilioApiError(502, null, 'Twilio answered a message without a sid');
    return { sid: body.sid, status: body.status ?? 'queued' };
  }
}
