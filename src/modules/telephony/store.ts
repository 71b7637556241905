// The only SQL of the telephony area.
import type { Kysely, Updateable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type {
  InboundConfigurationsTable,
  PhoneAddressesTable,
  PhoneNumbersTable,
  SmsMessagesTable,
  SmsStatusesTable,
} from './tables.js';

export class TelephonyStore {
  constructor(readonly db: Kysely<Database>) {}

  /** Runs `work` in one transaction with a store bound to it (services hand `tx.db` to the event recorder). */
  transaction<T>(work: (tx: TelephonyStore) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(new TelephonyStore(trx)));
  }

  // Numbers

  /** Inserts the number; false when the provider's number already has an owner here. */
  async insertNumber(row: PhoneNumbersTable): Promise<boolean> {
    const result = await this.db
      .insertInto('phone_numbers')
      .values(row)
      .onConflict((oc) => oc.columns(['provider', 'phone_number']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  findNumber(userId: string, id: string) {
    return this.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  /** A number whoever owns it (provider callbacks name numbers by id and are verified by signature). */
  findNumberById(id: string) {
    return this.db.selectFrom('phone_numbers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  listNumbers(userId: string) {
    return this.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  }

  /** Numbers of `provider` owned by anyone among `phoneNumbers` (search hides them). */
  async ownedNumbers(provider: string, phoneNumbers: string[]): Promise<Set<string>> {
    if (phoneNumbers.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('phone_numbers')
      .select('phone_number')
      .where('provider', '=', provider)
      .where('phone_number', 'in', phoneNumbers)
      .execute();
    return new Set(rows.map((r) => r.phone_number));
  }

  async updateNumber(userId: string, id: string, changes: Updateable<PhoneNumbersTable>) {
    return this.db
      .updateTable('phone_numbers')
      .set(changes)
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
  }

  /** Moves a number from status `from` to `to`; false when it was not in `from`. */
  async moveNumberStatus(userId: string, id: string, from: string, to: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('phone_numbers')
      .set({ status: to, updated_at: now })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async deleteNumber(userId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('phone_numbers')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /**
   * Moves a number's attachment from `from` to `to` only if it is still at
   * `from` (null = detached): concurrent attaches cannot both win.
   */
  async moveAttachment(
    userId: string,
    numberId: string,
    from: string | null,
    to: string | null,
    now: number,
  ): Promise<boolean> {
    let query = this.db
      .updateTable('phone_numbers')
      .set({ inbound_configuration_id: to, updated_at: now })
      .where('id', '=', numberId)
      .where('user_id', '=', userId)
      .where('status', '=', 'active');
    query =
      from === null
        ? query.where('inbound_configuration_id', 'is', null)
        : query.where('inbound_configuration_id', '=', from);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  listNumbersOfConfiguration(userId: string, configurationId: string) {
    return this.db
      .selectFrom('phone_numbers')
      .selectAll()
      .where('user_id', '=', userId)
      .where('inbound_configuration_id', '=', configurationId)
      .orderBy('created_at', 'asc')
      .execute();
  }

  /** Attached number ids per configuration of the user. */
  async attachedNumberIds(userId: string): Promise<Map<string, string[]>> {
    const rows = await this.db
      .selectFrom('phone_numbers')
      .select(['id', 'inbound_configuration_id'])
      .where('user_id', '=', userId)
      .where('inbound_configuration_id', 'is not', null)
      .orderBy('created_at', 'asc')
      .execute();
    const out = new Map<string, string[]>();
    for (const r of rows) out.set(r.inbound_configuration_id!, [...(out.get(r.inbound_configuration_id!) ?? []), r.id]);
    return out;
  }

  // Addresses and price tokens

  async insertAddress(row: PhoneAddressesTable): Promise<void> {
    await this.db.insertInto('phone_addresses').values(row).execute();
  }

  findAddress(userId: string, id: string) {
    return this.db
      .selectFrom('phone_addresses')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  // Inbound configurations

  async insertConfiguration(row: InboundConfigurationsTable): Promise<void> {
    await this.db.insertInto('inbound_configurations').values(row).execute();
  }

  findConfiguration(userId: string, id: string) {
    return this.db
      .selectFrom('inbound_configurations')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  listConfigurations(userId: string) {
    return this.db
      .selectFrom('inbound_configurations')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  }

  updateConfiguration(userId: string, id: string, changes: Updateable<InboundConfigurationsTable>) {
    return this.db
      .updateTable('inbound_configurations')
      .set(changes)
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
  }

  async deleteConfiguration(userId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('inbound_configurations')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  // SMS

  async insertMessage(row: SmsMessagesTable): Promise<void> {
    await this.db.insertInto('sms_messages').values(row).execute();
  }

  async deleteMessage(id: string): Promise<void> {
    await this.db.deleteFrom('sms_messages').where('id', '=', id).execute();
  }

  findMessage(userId: string, id: string) {
    return this.db
      .selectFrom('sms_messages')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  /** A message by id alone: for provider callbacks, which carry no user. */
  findMessageById(id: string) {
    return this.db.selectFrom('sms_messages').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The user's messages, newest first; `before` is the id of the last one already seen. */
  listMessages(userId: string, page: { limit: number; phoneNumberId?: string; before?: string }) {
    let query = this.db.selectFrom('sms_messages').selectAll().where('user_id', '=', userId);
    if (page.phoneNumberId) query = query.where('phone_number_id', '=', page.phoneNumberId);
    if (page.before) query = query.where('id', '<', page.before);
    return query.orderBy('id', 'desc').limit(page.limit).execute();
  }

  /** The status histories of several messages. */
  listStatusesOf(messageIds: string[]) {
    if (messageIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('sms_statuses').selectAll().where('message_id', 'in', messageIds).execute();
  }

  listStatuses(messageId: string) {
    return this.db
      .selectFrom('sms_statuses')
      .selectAll()
      .where('message_id', '=', messageId)
      .orderBy('at', 'asc')
      .execute();
  }

  /** Records a status once; false when the message already had it (a repeated callback). */
  async insertStatus(row: SmsStatusesTable): Promise<boolean> {
    const result = await this.db
      .insertInto('sms_statuses')
      .values(row)
      .onConflict((oc) => oc.columns(['message_id', 'status']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /** Sets the current status only if it is still one of `behind` (less far along): concurrent callbacks never move it back. */
  async advanceMessageStatus(
    id: string,
    status: string,
    errorCode: string | null,
    behind: string[],
    now: number,
  ): Promise<void> {
    if (behind.length === 0) return;
    await this.db
      .updateTable('sms_messages')
      .set({ status, error_code: errorCode, updated_at: now })
      .where('id', '=', id)
      .where('status', 'in', behind)
      .execute();
  }

  /** Moves a message's charge from `from` to `to` (once); true for the caller that moved it. */
  async moveCharge(id: string, from: string, to: string): Promise<boolean> {
    const result = await this.db
      .updateTable('sms_messages')
      .set({ charge_state: to })
      .where('id', '=', id)
      .where('charge_state', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async updateMessage(id: string, changes: Updateable<SmsMessagesTable>): Promise<void> {
    await this.db.updateTable('sms_messages').set(changes).where('id', '=', id).execute();
  }
}
