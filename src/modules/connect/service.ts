// Connector ingestion (spec 4.10, DESIGN "Connectors"): streams records from
// the connector, encrypts each with the store's default key (AES-256-GCM, a
// fresh 12-byte IV) and creates them as children of the store through the data
// plane's object service, in batches, one object_created event per record.
// `/get-leads` spends lead credits: the plan's allowance first, then prepaid
// balance reserved before streaming; only delivered leads are charged.
import { createCipheriv, randomBytes } from 'node:crypto';
import { AppError, invalidInput } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { ConnectorProvider } from '../../providers/connector/interface.js';
import { ConnectorError } from '../../providers/connector/interface.js';
import type { BillingAccount } from '../billing/account.js';
import type { RootService } from '../data/root-service.js';
import type { KeyService } from '../data/keys-service.js';
import type { ObjectService } from '../data/objects-service.js';
import type { CiphertextBytes } from '../data/objects-service.js';
import { STORE_NAMES, type StoreName } from '../data/root-service.js';
import { LEADS_PATH, normaliseConnectorPath } from './path.js';
import type { ConnectJobStore } from './store.js';
import type { ConnectJobsTable } from './tables.js';

/** Records per batch create (one transaction, on PostgreSQL one statement). */
const BATCH = 500;
/** Billing's own recovery of holds nobody claimed: older than any live hold of any area. */
const BILLING_BACKSTOP_MS = 24 * 3600_000;
/** Records encrypted ahead of the writer before the stream is read further. */
const MAX_QUEUED = 4 * BATCH;

export interface ConnectInput {
  repository: string;
  path: string;
  params: Record<string, unknown>;
}

export interface ConnectResult {
  /** Objects created (each announced by an object_created event). */
  written: number;
  /** Frames that were not a JSON object, skipped. */
  skipped: number;
  /** `/get-leads`: the credits granted after clamping; null for other paths. */
  credits: number | null;
  /** Why the connector stream ended early; null when it ended normally (or the credits were used up). */
  failure: string | null;
  /** Settling the credits failed (billing unreachable); the job is settled later by recovery. */
  settlementError?: unknown;
}

export interface ConnectSettings {
  leadPriceCents: number;
  /** A running lead job stamps its heartbeat this often (real time), whatever the connector does. */
  heartbeatMs: number;
  /** A lead job whose heartbeat is older than this (clock time) is settled by recovery. */
  abandonedAfterMs: number;
}

/** Why a lead job's stream stopped when recovery settled it elsewhere. */
const LOST_JOB = 'the job was settled by recovery (its heartbeat went stale); the stream was stopped';

export class ConnectService {
  constructor(
    private readonly data: { root: RootService; keys: KeyService; objects: ObjectService },
    private readonly connector: ConnectorProvider,
    /** null until a billing account is wired: `/get-leads` then grants nothing. */
    private readonly billing: BillingAccount | null,
    private readonly jobs: ConnectJobStore,
    private readonly clock: Clock,
    private readonly settings: ConnectSettings,
  ) {}

  /**
   * Runs one ingestion job to its end. A connector failure ends the job with
   * what was written kept (`failure` set); `signal` stops it early (the client
   * went away). Lead credits are settled whatever happens.
   */
  async run(userId: string, input: ConnectInput, signal: AbortSignal): Promise<ConnectResult> {
    const repository = checkRepository(input.repository);
    // Normalised before anything else: the billing decision and the URL sent both use this path.
    const { path, leads } = normaliseConnectorPath(input.path);
    let params = input.params;
    let cap = Infinity;
    let job: ConnectJobsTable | null = null;
    if (leads) {
      job = await this.grantLeads(userId, repository, params);
      if (!job) return { written: 0, skipped: 0, credits: 0, failure: null };
      cap = job.granted;
      params = { ...params, credits: job.granted };
    }
    const progress = { written: 0, skipped: 0 };
    let failure: string | null = null;
    let settlementError: unknown = null;
    // A lead job stamps its heartbeat while it runs; if recovery settled it meanwhile (the stamp found it no
    // longer running), the stream stops and nothing more is written: only what was charged is delivered.
    const lost = new AbortController();
    const heartbeat = job ? this.startHeartbeat(job.id, lost) : null;
    try {
      const target = await this.data.root.getStore(userId, repository);
      const material = await this.data.keys.readKeyMaterial(userId, target.keyId);
      if (!material) throw new Error(`default key of store ${repository} of user ${userId} is missing`);
      const onBatch = job
        ? async (written: number) => {
            if (!(await this.jobs.recordProgress(job.id, written, this.clock.now()))) lost.abort();
          }
        : async () => {};
      const frames = this.connector.stream({
        path,
        params,
        repository,
        signal: AbortSignal.any([signal, lost.signal]),
      });
      failure = await this.ingest(
        userId,
        { relatedId: target.id, keyId: target.keyId },
        material.key,
        frames,
        cap,
        progress,
        onBatch,
        lost.signal,
      );
      if (lost.signal.aborted) failure = LOST_JOB;
    } finally {
      if (heartbeat) clearInterval(heartbeat);
      if (job && !lost.signal.aborted) {
        try {
          await this.settle(job, progress.written);
        } catch (err) {
          // The records are written: the answer stands. Recovery (at start and in housekeeping) finishes the charge.
          settlementError = err;
        }
      }
    }
    return { ...progress, credits: job ? job.granted : null, failure, settlementError };
  }

  /**
   * Stamps a running job's heartbeat every `heartbeatMs` until cleared; aborts
   * `lost` when the job is no longer running (recovery settled it). A failed
   * stamp (database unreachable) is tried again at the next beat.
   */
  private startHeartbeat(jobId: string, lost: AbortController): NodeJS.Timeout {
    let beating = false;
    const timer = setInterval(() => {
      if (beating || lost.signal.aborted) return;
      beating = true;
      this.jobs
        .beat(jobId, this.clock.now())
        .then((alive) => {
          if (!alive) lost.abort();
        })
        .catch(() => {})
        .finally(() => (beating = false));
    }, this.settings.heartbeatMs);
    timer.unref();
    return timer;
  }

  /**
   * Recovery (at start and in housekeeping): settles lead jobs whose heartbeat
   * went stale, i.e. whose instance stopped mid-stream (charging only what they
   * delivered, the count persisted after every batch) and finishes settlements whose charge
   * failed; then asks billing to return holds older than a day that nothing
   * claimed (billing's own backstop; no live hold of any area is that old).
   * Returns the number of jobs settled here.
   */
  async recoverAbandoned(): Promise<number> {
    const before = this.clock.now() - this.settings.abandonedAfterMs;
    let settled = 0;
    for (const job of await this.jobs.listAbandoned(before)) {
      if (await this.settle(job, null)) settled++;
    }
    await this.billing?.settleAbandoned(BILLING_BACKSTOP_MS);
    return settled;
  }

  /**
   * Clamps params.credits to the remaining allowance plus what the balance
   * buys, records the job and reserves the paid part; null when nothing can be
   * granted (or billing is not wired).
   */
  private async grantLeads(
    userId: string,
    repository: StoreName,
    params: Record<string, unknown>,
  ): Promise<ConnectJobsTable | null> {
    const requested = params.credits;
    if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 0) {
      throw invalidInput('params.credits must be a whole number of leads (0 or more) for /get-leads');
    }
    if (!this.billing || requested === 0) return null;
    const billing = this.billing;
    const price = this.settings.leadPriceCents;
    // One grant per user at a time, so two requests cannot both spend the same allowance.
    const job = await this.jobs.serializedForUser(userId, async (jobs) => {
      // Free credits already promised to this user's running jobs are not in the allowance's usage yet.
      const allowance = Math.max(
        0,
        (await billing.remainingAllowance(userId, 'leads')) - (await jobs.freeCreditsInFlight(userId)),
      );
      const buyable = Math.floor(Math.max(0, await billing.balanceCents(userId)) / price);
      const granted = Math.min(requested, allowance + buyable);
      if (granted === 0) return null;
      const free = Math.min(granted, allowance);
      const now = this.clock.now();
      const row: ConnectJobsTable = {
        id: newId(now),
        user_id: userId,
        repository,
        path: LEADS_PATH,
        state: 'running',
        granted,
        free_credits: free,
        price_cents: price,
        reserved_cents: (granted - free) * price,
        delivered: 0,
        created_at: now,
        updated_at: now,
      };
      // The job row before the reservation: a crash after reserving leaves a row that recovery finds.
      await jobs.insert(row);
      return row;
    });
    if (!job) return null;
    if (job.reserved_cents > 0) {
      try {
        await billing.reserve(userId, job.reserved_cents, reservationRef(job.id));
      } catch (err) {
        // No hold was made (the balance fell meanwhile): the job ends here, nothing to settle.
        if (err instanceof AppError && err.code === 'insufficient_funds')
          await this.jobs.markSettled(job.id, this.clock.now());
        throw err;
      }
    }
    return job;
  }

  /**
   * Settles a lead job once: keeps the price of the paid leads delivered,
   * returns the rest of the hold, records `leads` usage. `delivered` null: the
   * count the job last recorded (recovery). False when someone else settled it.
   */
  private async settle(job: Pick<ConnectJobsTable, 'id' | 'user_id'>, delivered: number | null): Promise<boolean> {
    const billing = this.billing;
    if (!billing) return false;
    // Under the user's grant lock: usage is recorded before the next grant reads the allowance.
    return this.jobs.serializedForUser(job.user_id, async (jobs) => {
      const now = this.clock.now();
      // A running job is claimed with its final count; one left settling (its charge failed) is charged again
      // by recovery: billing's settle, refund and usage are idempotent by ref, so a repeat changes nothing.
      const claimed =
        (await jobs.claimSettlement(job.id, delivered, now)) ??
        (delivered === null ? await jobs.findSettling(job.id) : undefined);
      if (!claimed) return false;
      const count = Math.min(Number(claimed.delivered), Number(claimed.granted));
      const paid = Math.max(0, count - Number(claimed.free_credits));
      const ref = reservationRef(claimed.id);
      if (Number(claimed.reserved_cents) > 0) {
        if (paid > 0)
          await billing.settle(ref, Math.min(paid * Number(claimed.price_cents), Number(claimed.reserved_cents)));
        else await billing.refund(ref);
      }
      if (count > 0) await billing.recordUsage(claimed.user_id, 'leads', count, ref);
      await jobs.markSettled(claimed.id, this.clock.now());
      return true;
    });
  }

  /**
   * Reads the stream and writes what it brings. The writer runs beside the
   * reader: while one batch is written the next is parsed and encrypted, and
   * whatever arrived meanwhile becomes the next batch (up to BATCH records).
   * Returns the connector's failure, if any; a write failure is thrown after
   * the writes already started have finished.
   */
  private async ingest(
    userId: string,
    parent: { relatedId: string; keyId: string },
    key: Buffer,
    frames: AsyncIterable<string[]>,
    cap: number,
    progress: { written: number; skipped: number },
    onBatch: (written: number) => Promise<void>,
    /** Aborted when the job was settled elsewhere: no further batch is written. */
    stop?: AbortSignal,
  ): Promise<string | null> {
    const queue: CiphertextBytes[] = [];
    let accepted = 0;
    let writer: Promise<void> | null = null;
    let writeError: unknown = null;
    const writeQueued = async () => {
      while (queue.length > 0 && writeError === null) {
        if (stop?.aborted) {
          queue.length = 0;
          break;
        }
        const batch = queue.splice(0, BATCH);
        try {
          await this.data.objects.createChildrenFromBytes(userId, parent, batch);
          progress.written += batch.length;
          await onBatch(progress.written);
        } catch (err) {
          writeError = err;
        }
      }
    };
    const kick = () => {
      writer ??= writeQueued().finally(() => (writer = null));
      return writer;
    };
    let failure: string | null = null;
    try {
      for await (const piece of frames) {
        const ivs = randomBytes(12 * piece.length);
        for (let i = 0; i < piece.length && accepted < cap; i++) {
          if (!isJsonObject(piece[i])) {
            progress.skipped++;
            continue;
          }
          queue.push(encrypt(key, ivs.subarray(i * 12, i * 12 + 12), piece[i]));
          accepted++;
        }
        void kick();
        while (queue.length >= MAX_QUEUED && writeError === null) await kick();
        if (writeError !== null || accepted >= cap || stop?.aborted) break; // leaving the loop closes the connector stream
      }
    } catch (err) {
      if (!(err instanceof ConnectorError) && !stop?.aborted) throw err;
      failure = (err as Error).message;
    } finally {
      while ((queue.length > 0 && writeError === null) || writer) await kick();
    }
    if (writeError !== null) throw writeError;
    return failure;
  }
}

export const reservationRef = (jobId: string) => `connect:${jobId}`;

function checkRepository(name: string): StoreName {
  if (!(STORE_NAMES as readonly string[]).includes(name))
    throw invalidInput(`repository must be one of: ${STORE_NAMES.join(', ')}`);
  return name as StoreName;
}

/** A record is a JSON object; anything else (not JSON, or a bare value or array) is skipped. */
function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** AES-256-GCM of the record's JSON text, as the SDK encrypts (fresh 12-byte iv, 16-byte tag). */
function encrypt(key: Buffer, iv: Buffer, plaintext: string): CiphertextBytes {
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const content = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { content, authTag: cipher.getAuthTag(), iv };
}
