// Twilio Messages REST API: POST /2010-04-01/Accounts/{sid}/Messages.json,
// form-encoded, HTTP Basic auth with the account SID and auth token.
import { AppError } from '../../http/errors.js';
import type { SmsMessage, SmsProvider, SmsResult } from './interface.js';

export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  from: string;
  /** https://api.twilio.com, or a local server in tests. */
  apiBase: string;
}

export class TwilioSmsProvider implements SmsProvider {
  readonly name = 'twilio';
  readonly sandbox = false;
  constructor(private readonly config: TwilioConfig) {}

  async send(message: SmsMessage): Promise<SmsResult> {
    const form = new URLSearchParams({ To: message.to, From: message.from ?? this.config.from, Body: message.body });
    if (message.statusCallbackUrl) form.set('StatusCallback', message.statusCallbackUrl);
    const auth = Buffer.from(`${this.config.accountSid}:${this.config.authToken}`).toString('base64');
    let res: Response;
    try {
      res = await fetch(`${this.config.apiBase}/2010-04-01/Accounts/${encodeURIComponent(this.config.accountSid)}/Messages.json`, {
        method: 'POST',
        headers: { authorization: `Basic ${auth}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      throw new AppError('provider_error', `SMS provider unreachable: ${(err as Error).message}`);
    }
    const body = (await res.json().catch(() => ({}))) as { sid?: string; status?: string; message?: string; code?: number };
    if (!res.ok || !body.sid) {
      throw new AppError('provider_error', `SMS provider refused the message: ${body.message ?? `HTTP ${res.status}`}`);
    }
    return { id: body.sid, status: body.status ?? 'queued' };
  }
}
