// Outbound SMS (spec 4.13; DESIGN "Telephony") and the provider's delivery
// callbacks: each message keeps its status history (starting with the status
// of the provider's create answer, for which Twilio sends no callback), its
// current status is the furthest one reached, and every new status is an
// `sms_status` event. Each message costs SMS_PRICE_USD per segment from the
// prepaid balance (DESIGN "Money for calls and SMS"): held before it is sent
// (ledger ref `sms:{id}`), kept when it reaches `sent`/`delivered`, returned
// when it fails first; once, however the callbacks repeat or race.
import type { RateLimitRule } from '../../config.js';
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { countSmsSegments } from '../../lib/sms-segments.js';
import { iso } from '../../lib/time.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import { type SignedParams, verifyTwilioSignature } from '../../providers/telephony/twilio-signature.js';
import type { BillingAccount } from '../billing/account.js';
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
/** Statuses that settle a message's hold: the carrier took it (charged), or it failed before that (returned). */
const CHARGED_STATUSES = new Set(['sent', 'delivered', 'read']);
const REFUNDED_STATUSES = new Set(['failed', 'undelivered', 'canceled']);

/** Cents a message costs: `segmentPrice` (ten-thousandths of a dollar) per segment, rounded up to the next cent. */
export function smsPriceCents(body: string, segmentPrice: number): { segments: number; cents: number } {
  const { segments } = countSmsSegments(body);
  return { segments, cents: Math.ceil((segments * segmentPrice) / 100) };
}

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
  /** Segments it was sent as, and what it costs: `{ amount, currency }` (held until the final status; null when not charged). */
  segments: number | null;
  price: { amount: number; currency: 'usd' } | null;
  createdAt: string;
  updatedAt: string;
}

export class SmsService {
  constructor(
    private readonly store: TelephonyStore,
    private readonly providers: TelephonyProviders,
    private readonly events: EventRecorder,
    private readonly limiter: RateLimiter,
    private readonly billing: Pick<BillingAccount, 'reserve' | 'settle' | 'refund'>,
    private readonly clock: Clock,
    private readonly options: { publicUrl: string; sendPerUser: RateLimitRule; segmentPrice: number },
  ) {}

  async send(userId: string, input: { phoneNumberId: string; to: string; body: string }): Promise<SmsView> {
    if (input.body.length === 0 || input.body.length > SMS_BODY_MAX)
      throw invalidInput(`body must be 1 to ${SMS_BODY_MAX} characters`);
    const number = await this.store.findNumber(userId, input.phoneNumberId);
    if (!number) throw notFound('phone number');
    if (number.status !== 'active') throw new AppError('conflict', `the number is ${number.status}, not active`);
    if (!(JSON.parse(number.capabilities) as { sms?: boolean }).sms)
      throw new AppError('conflict', 'this number cannot send SMS');
    const provider = this.providers.get(number.provider);
    if (!provider)
      throw new AppError('provider_error', `provider "${number.provider}" is not configured on this server`);
    await this.limiter.consume(`sms:user:${userId}`, this.options.sendPerUser);

    // The message exists (status `accepted`, no history yet) before it is sent: a fast provider's first callback must find it.
    const startedAt = this.clock.now();
    const id = newId(startedAt);
    const price = smsPriceCents(input.body, this.options.segmentPrice);
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
      segments: price.segments,
      price_cents: price.cents,
      charge_state: 'held',
      created_at: startedAt,
      updated_at: startedAt,
    };
    await this.store.insertMessage(row);
    try {
      // 402 insufficient_funds when the balance does not cover it: nothing is sent.
      await this.billing.reserve(userId, price.cents, holdRef(id));
    } catch (err) {
      await this.store.deleteMessage(id);
      throw err;
    }
    let sent: { sid: string; status: string };
    try {
      sent = await provider.sendMessage({
        from: number.phone_number,
        to: input.to,
        body: input.body,
        statusCallbackUrl: `${this.options.publicUrl}/api/webhooks/twilio/sms/${id}`,
      });
    } catch (err) {
      // Nothing was sent: the hold goes back and the message is forgotten.
      await this.billing.refund(holdRef(id));
      await this.store.deleteMessage(id);
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
  async handleStatusCallback(
    id: string,
    requestUri: string,
    signature: string | undefined,
    params: SignedParams,
  ): Promise<void> {
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
    if (message.provider !== signers[index].slug)
      throw new AppError('invalid_signature', 'the callback was not signed by the provider that sent this message');
    const one = (name: string) => {
      const value = params[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const sid = one('MessageSid') ?? one('SmsSid');
    if (sid && message.provider_sid && sid !== message.provider_sid)
      throw invalidInput('MessageSid does not match this message');
    const status = one('MessageStatus') ?? one('SmsStatus');
    if (!status || STATUS_RANK[status] === undefined) throw invalidInput(`unknown message status "${status ?? ''}"`);
    await this.recordStatus(message, status, one('ErrorCode') ?? null, 'callback', this.clock.now());
  }

  /** Adds a status to the history once, moves the current status forward, emits `sms_status`. */
  private async recordStatus(
    message: SmsMessagesTable,
    status: string,
    errorCode: string | null,
    source: string,
    at: number,
  ): Promise<void> {
    const entry: SmsStatusesTable = { message_id: message.id, status, error_code: errorCode, source, at };
    const recorded = await this.store.transaction(async (tx) => {
      if (!(await tx.insertStatus(entry))) return false;
      const behind = Object.keys(STATUS_RANK).filter((s) => STATUS_RANK[s] < STATUS_RANK[status]);
      await tx.advanceMessageStatus(message.id, status, errorCode, behind, this.clock.now());
      await this.events.record(tx.db, [
        {
          userId: message.user_id,
          type: 'sms_status',
          payload: {
            message_id: message.id,
            phone_number_id: message.phone_number_id,
            from: message.from_number,
            to: message.to_number,
            status,
            error_code: errorCode,
            at: iso(at),
          },
        },
      ]);
      return true;
    });
    if (recorded) this.events.announce();
    // Also for a status seen before: a callback retried after a failed settlement finishes it.
    await this.settleCharge(message, status);
  }

  /** Keeps or returns the message's hold on its first final status; the conditional move makes it once. */
  private async settleCharge(message: SmsMessagesTable, status: string): Promise<void> {
    const outcome = CHARGED_STATUSES.has(status) ? 'charged' : REFUNDED_STATUSES.has(status) ? 'refunded' : null;
    if (!outcome || message.price_cents === null || message.price_cents === undefined) return;
    if (!(await this.store.moveCharge(message.id, 'held', outcome))) return;
    try {
      if (outcome === 'charged') await this.billing.settle(holdRef(message.id), Number(message.price_cents));
      else await this.billing.refund(holdRef(message.id));
    } catch (err) {
      // Billing did not take it: the next callback (the provider retries on an error answer) tries again.
      await this.store.moveCharge(message.id, outcome, 'held');
      throw err;
    }
  }
}

const holdRef = (messageId: string) => `sms:${messageId}`;

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
    segments: row.segments ?? null,
    price:
      row.price_cents === null || row.price_cents === undefined
        ? null
        : { amount: Number(row.price_cents) / 100, currency: 'usd' },
    statuses: [...statuses]
      .sort((a, b) => Number(a.at) - Number(b.at) || (STATUS_RANK[a.status] ?? 0) - (STATUS_RANK[b.status] ?? 0))
      .map((s) => ({ status: s.status, errorCode: s.error_code, at: iso(s.at) })),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
