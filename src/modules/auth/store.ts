// SQL for users and session revocation. Every write of `users` is here (one
// store per table): the other auth stores pass their transaction to
// insertUser and updateUser.
import type { Expression, ExpressionBuilder, Kysely, SqlBool, UpdateObject, Updateable } from 'kysely';
import type { Database } from '../../db/schema.js';
import { noUserChangeListener, type UserChangeListener } from './credential-cache.js';
import { newId } from '../../lib/ids.js';
import { prepareQuery } from '../../db/prepared.js';
import type { UsersTable } from './tables.js';

export type UserRow = UsersTable;

/** A new user row with every security flag at its starting value. */
export function newUserRow(
  fields: {
    email: string;
    firstName: string;
    lastName: string;
    phone: string | null;
    passwordHash: string | null;
    phoneVerified?: boolean;
  },
  now: number,
): UserRow {
  return {
    id: newId(),
    email: fields.email,
    first_name: fields.firstName,
    last_name: fields.lastName,
    phone: fields.phone,
    phone_verified: fields.phoneVerified ? 1 : 0,
    password_hash: fields.passwordHash,
    totp_secret: null,
    totp_pending_secret: null,
    two_factor_enabled: 0,
    totp_last_step: null,
    token_version: 0,
    created_at: now,
    updated_at: now,
  };
}

const userById = prepareQuery((db, p) => db.selectFrom('users').selectAll().where('id', '=', p(0)));
const userForSession = prepareQuery((db, p) =>
  db
    .selectFrom('users')
    .selectAll('users')
    .select((eb) => eb.exists(eb.selectFrom('revoked_tokens').select('jti').where('jti', '=', p(0))).as('revoked'))
    .where('id', '=', p(1)),
);

/**
 * Inserts a user through `db` (the database, or another store's transaction); false when the email is taken.
 */
export async function insertUser(db: Kysely<Database>, user: UserRow): Promise<boolean> {
  const result = await db
    .insertInto('users')
    .values(user)
    .onConflict((oc) => oc.column('email').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

/**
 * Updates one user through `db`, only while `only` holds of the row when given (a conditional write that must not
 * race); false when no row was updated.
 */
export async function updateUser(
  db: Kysely<Database>,
  id: string,
  changes: UpdateObject<Database, 'users'>,
  only?: (eb: ExpressionBuilder<Database, 'users'>) => Expression<SqlBool>,
): Promise<boolean> {
  let query = db.updateTable('users').set(changes).where('id', '=', id);
  if (only) query = query.where(only);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export class UserStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly changes: UserChangeListener = noUserChangeListener,
  ) {}

  async findById(id: string): Promise<UserRow | undefined> {
    return (await userById.rows(this.db, [id]))[0];
  }

  findByEmail(email: string) {
    return this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  }

  /** The user of a session token and whether the token's id was revoked, in one query. */
  async findForSession(userId: string, jti: string): Promise<{ user: UserRow; revoked: boolean } | undefined> {
    const row = (await userForSession.rows(this.db, [jti, userId]))[0] as (UserRow & { revoked: unknown }) | undefined;
    if (!row) return undefined;
    const { revoked, ...user } = row;
    return { user, revoked: Boolean(revoked) };
  }

  /** Inserts a user; returns false when the email is taken. */
  insert(user: UserRow): Promise<boolean> {
    return insertUser(this.db, user);
  }

  async update(id: string, changes: Updateable<UsersTable>): Promise<void> {
    await updateUser(this.db, id, changes);
    this.changes.userChanged(id);
  }

  async revokeToken(jti: string, userId: string, expiresAt: number): Promise<void> {
    await this.db
      .insertInto('revoked_tokens')
      .values({ jti, user_id: userId, expires_at: expiresAt })
      .onConflict((oc) => oc.column('jti').doNothing())
      .execute();
    this.changes.userChanged(userId);
  }

  async deleteExpiredRevocations(now: number): Promise<void> {
    await this.db.deleteFrom('revoked_tokens').where('expires_at', '<', now).execute();
  }
}
