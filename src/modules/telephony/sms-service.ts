// Outbound SMS (spec 4.13; DESIGN "Telephony") and the provider's delivery
// callbacks: each message keeps its status history (starting with the status
// of the provider's create answer, for which Twilio sends no callback), its
// current status is the furthest one reached, and every new status is an
// `sms_status` event.
import type { RateLimitRule } from '../../config.js';
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import { type SignedParams, verifyTwilioSignature } from '../../providers/telephony/twilio-signature.js';
import type { EventRecorder } from '../events/recorder.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { TelephonyStore } from './store.js';
import type { SmsMessagesTable, SmsStatusesTable } from './tables.js';

/** How far along each of Twilio's message statuses is; the current status never moves back. */
export const STATUS_RANK: Record<string, number> = {
  accepted: 0,
  scheduled: 0,
  queued: 1,
  sending: 2,
  sent: 3,
  failed: 4,
  undelivered: 4,
  delivered: 4,
  canceled: 4,
  read: 5,
};

export const SMS_BODY_MAX = 1600;

export interface SmsView {
  id: string;
  phoneNumberId: string;
  from: string;
  to: string;
  body: string;
  status: string;
  errorCode: string | null;
  provider: string;
  providerSid: string | null;
  statuses: Array<{ status: string; errorCode: string | null; at: string }>;
  createdAt: string;
  updatedAt: string;
}

export class SmsService {
  constructor(
    private readonly store: TelephonyStore,
    private readonly providers: TelephonyProviders,
    private readonly events: EventRecorder,
    private readonly limiter: RateLimiter,
    private readonly clock: Clock,
    private readonly options: { publicUrl: string; sendPerUser: RateLimitRule },
  ) {}

  async send(userId: string, input: { phoneNumberId: string; to: string; body: string }): Promise<SmsView> {
    if (input.body.length === 0 || input.body.length > SMS_BODY_MAX) throw invalidInput(`body must be 1 to ${SMS_BODY_MAX} characters`);
    const number = await this.store.findNumber(userId, input.phoneNumberId);
    if (!number) throw notFound('phone number');
    if (number.status !== 'active') throw new AppError('conflict', `the number is ${number.status}, not active`);
    if (!(JSON.parse(number.capabilities) as { sms?: boolean }).sms) throw new AppError('conflict', 'this number cannot send SMS');
    const provider = this.providers.get(number.provider);
    if (!provider) throw new AppError('provider_error', `provider "${number.provider}" is not configured on this server`);
    await this.limiter.consume(`sms:user:${userId}`, this.options.sendPerUser);

    // The message exists (status `accepted`, no history yet) before it is sent: a fast provider's first callback must find it.
    const startedAt = this.clock.now();
    const id = newId(startedAt);
    const row: SmsMessagesTable = {
      id,
      user_id: userId,
      phone_number_id: number.id,
      provider: provider.slug,
      provider_sid: null,
      from_number: number.phone_number,
      to_number: input.to,
      body: input.body,
      status: 'accepted',
      error_code: null,
      created_at: startedAt,
      updated_at: startedAt,
    };
    await this.store.insertMessage(row);
    let sent: { sid: string; status: string };
    try {
      sent = await provider.sendMessage({ from: number.phone_number, to: input.to, body: input.body, statusCallbackUrl: `${this.options.publicUrl}/api/webhooks/twilio/sms/${id}` });
    } catch (err) {
      await this.store.deleteMessage(id); // nothing was sent
      throw err;
    }
    await this.store.updateMessage(id, { provider_sid: sent.sid, updated_at: this.clock.now() });
    await this.recordStatus({ ...row, provider_sid: sent.sid }, sent.status, null, 'create', startedAt);
    return this.get(userId, id);
  }

  async get(userId: string, id: string): Promise<SmsView> {
    const row = await this.store.findMessage(userId, id);
    if (!row) throw notFound('message');
    const statuses = await this.store.listStatuses(id);
    return toView(row, statuses);
  }

  /** The caller's messages, newest first (ids are time-ordered), each with its history. */
  async list(userId: string, page: { limit: number; phoneNumberId?: string; before?: string }): Promise<SmsView[]> {
    const rows = await this.store.listMessages(userId, page);
    const statuses = await this.store.listStatusesOf(rows.map((r) => r.id));
    return rows.map((row) =>
      toView(
        row,
        statuses.filter((s) => s.message_id === row.id),
      ),
    );
  }

  /**
   * A status callback for message `id` (POST /api/webhooks/twilio/sms/{id}).
   * The signature is checked first, against every provider's token; the
   * message must then belong to the provider that signed. A status already
   * recorded changes nothing.
   */
  async handleStatusCallback(id: string, requestUri: string, signature: string | undefined, params: SignedParams): Promise<void> {
    // PUBLIC_URL plus the URI as received, never a re-serialised one, so it matches what the provider signed behind proxies too.
    const url = this.options.publicUrl + requestUri;
    const signers = this.providers.list;
    const index = verifyTwilioSignature(
      signers.map((p) => p.callbackSigningToken),
      signature,
      url,
      params,
    );
    if (index < 0) throw new AppError('invalid_signature', 'X-Twilio-Signature does not match this request');
    const message = await this.store.findMessageById(id);
    if (!message) throw notFound('message');
    if (message.provider !== signers[index].slug) throw new AppError('invalid_signature', 'the callback was not signed by the provider that sent this message');
    const one = (name: string) => {
      const value = params[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const sid = one('MessageSid') ?? one('SmsSid');
    if (sid && message.provider_sid && sid !== message.provider_sid) throw invalidInput('MessageSid does not match this message');
    const status = one('MessageStatus') ?? one('SmsStatus');
    if (!status || STATUS_RANK[status] === undefined) throw invalidInput(`unknown message status "${status ?? ''}"`);
    await this.recordStatus(message, status, one('ErrorCode') ?? null, 'callback', this.clock.now());
  }

  /** Adds a status to the history once, moves the current status forward, emits `sms_status`. */
  private async recordStatus(message: SmsMessagesTable, status: string, errorCode: string | null, source: string, at: number): Promise<void> {
    const entry: SmsStatusesTable = { message_id: message.id, status, error_code: errorCode, source, at };
    const recorded = await this.store.transaction(async (tx) => {
      if (!(await tx.insertStatus(entry))) return false;
      const behind = Object.keys(STATUS_RANK).filter((s) => STATUS_RANK[s] < STATUS_RANK[status]);
      await tx.advanceMessageStatus(message.id, status, errorCode, behind, this.clock.now());
      await this.events.record(tx.db, [
        {
          userId: message.user_id,
          type: 'sms_status',
          payload: { message_id: message.id, phone_number_id: message.phone_number_id, from: message.from_number, to: message.to_number, status, error_code: errorCode, at: iso(at) },
        },
      ]);
      return true;
    });
    if (recorded) this.events.announce();
  }
}

function toView(row: SmsMessagesTable, statuses: SmsStatusesTable[]): SmsView {
  return {
    id: row.id,
    phoneNumberId: row.phone_number_id,
    from: row.from_number,
    to: row.to_number,
    body: row.body,
    status: row.status,
    errorCode: row.error_code,
    provider: row.provider,
    providerSid: row.provider_sid,
    // By time; statuses of the same millisecond in the order they happen.
    statuses: [...statuses].sort((a, b) => Number(a.at) - Number(b.at) || (STATUS_RANK[a.status] ?? 0) - (STATUS_RANK[b.status] ?? 0)).map((s) => ({ status: s.status, errorCode: s.error_code, at: iso(s.at) })),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
