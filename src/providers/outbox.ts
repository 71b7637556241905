// Where sandbox providers put what they would have sent. Read back through
// GET /api/sandbox/outbox by people trying the API and by tests.
import { newId } from '../lib/ids.js';
import { iso } from '../lib/time.js';
import type { Clock } from '../lib/clock.js';
import type { PlatformStore } from '../modules/platform/store.js';

export interface OutboxMessage {
  channel: 'sms' | 'email';
  to: string;
  subject?: string;
  body: string;
  /** Machine-readable part: code, token, url. */
  data: Record<string, unknown>;
}

export class Outbox {
  constructor(
    private readonly store: PlatformStore,
    private readonly clock: Clock,
  ) {}

  async add(message: OutboxMessage): Promise<string> {
    const id = newId();
    await this.store.insertOutbox({
      id,
      channel: message.channel,
      recipient: message.to,
      subject: message.subject ?? null,
      body: message.body,
      data: JSON.stringify(message.data),
      created_at: this.clock.now(),
    });
    return id;
  }

  async list(to: string | null, limit = 50) {
    const rows = await this.store.listOutbox(to, limit);
    return rows.map((r) => ({
      id: r.id,
      channel: r.channel,
      to: r.recipient,
      ...(r.subject ? { subject: r.subject } : {}),
      body: r.body,
      data: JSON.parse(r.data) as Record<string, unknown>,
      createdAt: iso(r.created_at),
    }));
  }
}
