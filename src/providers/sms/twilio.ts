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
    try {
      const sent = await this.client.sendMessage({
        from: message.from ?? this.config.from,
        to: message.to,
        body: message.body,
        statusCallbackUrl: message.statusCallbackUrl,
      });
      return { id: sent.sid, status: sent.status };
    } catch (err) {
      const reason = (err as Error).message;
      throw new AppError(
        'provider_error',
        reason.startsWith('Twilio unreachable')
          ? `SMS provider unreachable: ${reason}`
          : `SMS provider refused the message: ${reason}`,
      );
    }
  }
}
