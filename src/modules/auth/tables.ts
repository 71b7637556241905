// Tables owned by the account-access modules. Times are epoch milliseconds;
// flags are 0/1 integers (see src/db/columns.ts).

export interface UsersTable {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  phone: string | null;
  phone_verified: number;
  /** argon2id PHC string; null for users created through an external provider. */
  password_hash: string | null;
  /** Sealed (master key) base32 TOTP secret once 2FA is confirmed. */
  totp_secret: string | null;
  /** Sealed secret handed out by 2fa/enable/request, awaiting confirmation. */
  totp_pending_secret: string | null;
  two_factor_enabled: number;
  /** Last TOTP time step accepted, so a code is accepted once only. */
  totp_last_step: number | null;
  /** Bumped to end every session of the user (password reset). */
  token_version: number;
  created_at: number;
  updated_at: number;
}

export interface RevokedTokensTable {
  jti: string;
  user_id: string;
  expires_at: number;
}

export interface PhoneCodesTable {
  id: string;
  user_id: string;
  phone: string;
  code_hash: string;
  attempts: number;
  expires_at: number;
  consumed_at: number | null;
  created_at: number;
}

export interface PasswordResetsTable {
  token_hash: string;
  user_id: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

export interface RecoveryCodesTable {
  id: string;
  user_id: string;
  code_hash: string;
  used_at: number | null;
  created_at: number;
}

export interface ExternalIdentitiesTable {
  id: string;
  user_id: string;
  provider: string;
  subject: string;
  email: string | null;
  created_at: number;
}

/** One row per started external sign-in (state, nonce and PKCE verifier). */
export interface OauthStatesTable {
  state: string;
  provider: string;
  code_verifier: string;
  nonce: string;
  return_to: string | null;
  /** Set when a signed-in user starts the flow to attach a provider. */
  attach_user_id: string | null;
  expires_at: number;
}

/** The result of a provider callback, waiting for GET /api/auth/external/register/{token}. */
export interface ExternalPendingTable {
  token_hash: string;
  provider: string;
  subject: string;
  email: string | null;
  email_verified: number;
  first_name: string;
  last_name: string;
  attach_user_id: string | null;
  expires_at: number;
  used_at: number | null;
}

export interface AccountTables {
  users: UsersTable;
  revoked_tokens: RevokedTokensTable;
  phone_codes: PhoneCodesTable;
  password_resets: PasswordResetsTable;
  recovery_codes: RecoveryCodesTable;
  external_identities: ExternalIdentitiesTable;
  oauth_states: OauthStatesTable;
  external_pending: ExternalPendingTable;
}
