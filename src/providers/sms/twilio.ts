// Twilio Messages REST API: POST /2010-04-01/Accounts/{sid}/Messages.json,
// form-encoded, HTTP Basic auth with the account SID and auth token.
import { AppError } from '../../http/errors.js';
import { type TwilioCredentials, TwilioRestClient } from '../twilio-rest.js';
import type { SmsMessage, SmsProvider, SmsResult } from './interface.js';

export interface TwilioConfig extends TwilioCredentials {
  from: string;
}

export class TwilioSmsProvider implements SmsProvider {
  readonly name = 'twilio';
  readonly sandbox = false;
  private readonly client: TwilioRestClient;
  constructor(private readonly config: TwilioConfig) {
    this.client = new TwilioRestClient(config);
  }

  async send(message: SmsMessage): Promise<SmsResult> {
    let body: { sid?: string; status?: string };
    try {
      body = await this.client.request('POST', '/Messages.json', {
        To: message.to,
        From: message.from ?? this.config.from,
        Body: message.body,
        StatusCallback: message.statusCallbackUrl,
      });
    } catch (err) {
      const reason = (err as Error).message;
      throw new AppError('provider_error', reason.startsWith('Twilio unreachable') ? `SMS provider unreachable: ${reason}` : `SMS provider refused the message: ${reason}`);
    }
    if (!body.sid) throw new AppError('provider_error', 'SMS provider refused the message: no message sid in its answer');
    return { id: body.sid, status: body.status ?? 'queued' };
  }
}
