// Tables of the encrypted data plane (spec 2.5–2.9): the service's own key
// pairs, registered servers, store keys, objects, publications and the
// per-user root marker.

/** The service's own P-256 key pairs. The highest generation is current; older ones keep decrypting. */
export interface ServiceKeysTable {
  name: string;
  generation: number;
  /** base64url SPKI DER. */
  public_key: string;
  /** PKCS#8 DER sealed with the master key (SecretBox). */
  private_key: string;
  created_at: number;
}

/** A user's registered server: only the public key is ever stored. */
export interface ServersTable {
  id: string;
  user_id: string;
  name: string;
  /** base64url SPKI DER of a P-256 key. */
  public_key: string;
  created_at: number;
}

export interface StoreKeysTable {
  id: string;
  user_id: string;
  server: string;
  /** The raw AES key sealed with the master key. */
  key_material: string;
  iv: Buffer;
  deprecated: number;
  created_at: number;
}

export type ObjectKind = 'root' | 'store' | 'object';

export interface ObjectsTable {
  id: string;
  user_id: string;
  /** null only for the root container; may name a key that has since been deleted. */
  key_id: string | null;
  related_id: string | null;
  kind: ObjectKind;
  /** Store name of a store container; null otherwise. */
  store: string | null;
  content: Buffer;
  auth_tag: Buffer;
  iv: Buffer | null;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface PublicationsTable {
  user_id: string;
  type: string;
  related_id: string;
  object_id: string;
  published_at: number;
}

/** One row per user whose root exists; its primary key makes root creation race-safe. */
export interface DataRootsTable {
  user_id: string;
  root_id: string;
  created_at: number;
}

export interface DataTables {
  service_keys: ServiceKeysTable;
  servers: ServersTable;
  store_keys: StoreKeysTable;
  objects: ObjectsTable;
  publications: PublicationsTable;
  data_roots: DataRootsTable;
}

/** Accepted jtis of signed payloads (persona previews, call sessions): a jti is accepted once per server. */
