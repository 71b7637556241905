export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string;
  /** sha256 of the clear key; keys carry 256 bits of entropy, so a fast hash is enough. */
  key_hash: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
}

export interface ApiKeyTables {
  api_keys: ApiKeysTable;
}
