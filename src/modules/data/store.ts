// The data plane's SQL, split by area. DataStore bundles the area stores over
// one Kysely handle so a service can run several of them in one transaction
// (and hand the same transaction to the event recorder).
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import { GroupCommit } from '../../db/group-commit.js';
import type { Database } from '../../db/schema.js';
import { KeyStore, ServerStore, ServiceKeyStore } from './keys-store.js';
import { ObjectStore } from './objects-store.js';
import { PublicationStore, RootStore } from './publish-store.js';

export class DataStore {
  readonly objects: ObjectStore;
  readonly keys: KeyStore;
  readonly servers: ServerStore;
  readonly serviceKeys: ServiceKeyStore;
  readonly publications: PublicationStore;
  readonly roots: RootStore;
  private groupCommit: GroupCommit | null = null;

  constructor(
    /** The handle (or transaction) these stores use; services pass it to the event recorder only. */
    readonly db: Kysely<Database>,
    readonly dialect: Dialect,
  ) {
    this.objects = new ObjectStore(db, dialect);
    this.keys = new KeyStore(db);
    this.servers = new ServerStore(db);
    this.serviceKeys = new ServiceKeyStore(db);
    this.publications = new PublicationStore(db);
    this.roots = new RootStore(db);
  }

  /**
   * Runs `work` in one transaction with stores bound to it. On SQLite,
   * concurrent writes share one commit (see db/group-commit.ts); PostgreSQL
   * commits each on its own connection and groups commits itself.
   */
  transaction<T>(work: (tx: DataStore) => Promise<T>): Promise<T> {
    const bound = (trx: Kysely<Database>) => work(new DataStore(trx, this.dialect));
    if (this.dialect === 'sqlite') return (this.groupCommit ??= new GroupCommit(this.db)).run(bound);
    return this.db.transaction().execute(bound);
  }
}

/** True for a foreign-key violation on either dialect (a parent deleted by a concurrent request). */
export function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
