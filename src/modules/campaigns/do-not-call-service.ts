// The account's do-not-call list (DESIGN.md "Campaigns"): numbers no outbound
// call of the account may dial. CallService.start asks it before every
// outbound call (a single call: 409 `do_not_call`; a campaign contact: status
// `do_not_call`, never dialled); the agent's `opt_out` tool adds the number
// it is talking to.
import { invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { iso } from '../../lib/time.js';
import type { DoNotCallStore } from './do-not-call-store.js';
import type { DoNotCallTable } from './tables.js';

const E164 = /^\+[1-9]\d{6,14}$/;

export interface DoNotCallView {
  phone: string;
  reason?: string;
  source: 'api' | 'opt_out';
  sessionId?: string;
  createdAt: string;
}

function view(row: DoNotCallTable): DoNotCallView {
  return {
    phone: row.phone,
    ...(row.reason ? { reason: row.reason } : {}),
    source: row.source,
    ...(row.session_id ? { sessionId: row.session_id } : {}),
    createdAt: iso(Number(row.created_at)),
  };
}

export function checkPhone(phone: string): string {
  if (!E164.test(phone)) throw invalidInput('phone must be an E.164 number (+ and 7 to 15 digits)');
  return phone;
}

export class DoNotCallService {
  constructor(
    private readonly store: DoNotCallStore,
    private readonly clock: Clock,
  ) {}

  async isListed(userId: string, phone: string): Promise<boolean> {
    return (await this.store.find(userId, phone)) !== undefined;
  }

  /** The listing of `phone`, if any (the dialer tells an opt-out during its own call from one made before). */
  listing(userId: string, phone: string): Promise<DoNotCallTable | undefined> {
    return this.store.find(userId, phone);
  }

  listed(userId: string, phones: string[]): Promise<Set<string>> {
    return this.store.listed(userId, phones);
  }

  async add(userId: string, input: { phone: string; reason?: string }): Promise<DoNotCallView> {
    const phone = checkPhone(input.phone);
    await this.store.add({
      user_id: userId,
      phone,
      reason: input.reason ?? null,
      source: 'api',
      session_id: null,
      created_at: this.clock.now(),
    });
    return view((await this.store.find(userId, phone))!);
  }

  /** The agent's opt_out tool: the caller asked not to be called again. */
  async optOut(userId: string, phone: string, sessionId: string): Promise<void> {
    await this.store.add({
      user_id: userId,
      phone,
      reason: 'the caller asked not to be called again',
      source: 'opt_out',
      session_id: sessionId,
      created_at: this.clock.now(),
    });
  }

  async remove(userId: string, phone: string): Promise<void> {
    if (!(await this.store.remove(userId, checkPhone(phone)))) throw notFound('number on the do-not-call list');
  }

  async list(
    userId: string,
    page: { after?: string; limit: number },
  ): Promise<{ items: DoNotCallView[]; next?: string }> {
    const rows = await this.store.list(userId, page.after ?? null, page.limit + 1);
    const items = rows.slice(0, page.limit).map(view);
    return rows.length > page.limit ? { items, next: items.at(-1)!.phone } : { items };
  }
}
