// What calls cost (DESIGN "Money for calls and SMS", docs/decisions/calls.md
// "Charges"). One API for both directions, for POST /api/session/call today
// and the voice agent's inbound calls next:
//
//   authorizeCall(user, { ref, direction, number | country, maxDurationSeconds })
//     → { ok: true, maxDurationSeconds, holdCents, … } or { ok: false, reason }
//   settleCall(ref, { seconds }) → what was charged (once, however often called)
//
// A refusal is a value (`insufficient_funds`, `concurrency_limit`,
// `unsupported_destination`): the HTTP route turns it into 402 / 429 / 400, the
// voice agent into a spoken message. Money moves only through billing's ledger
// holds (reserve → settle | refund), as connect's /get-leads does.
//
// A number the service dials on behalf of a call (a transfer's `<Dial>`) is a
// leg: `authorizeLeg` rates it like an outbound call to that number, plus the
// rate of its parent call, whose line stays open while the leg talks; it is
// paid from the balance only and settled by `settleCall` like any charge
// (docs/decisions/calls.md "Transfers are billed legs").
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { countryOfNumber } from '../../lib/phone-country.js';
import { Slots } from '../../lib/slots.js';
import type { BillingAccount } from '../billing/account.js';
import { type CallChargeStore, type ChargeSnapshot, LEG_DIRECTION } from './charge-store.js';

export { LEG_DIRECTION };

export type CallDirection = 'outbound' | 'inbound';
export type CallRefusal = 'insufficient_funds' | 'concurrency_limit' | 'unsupported_destination';

export type CallAuthorization =
  | {
      ok: true;
      ref: string;
      /** The longest the call may last: the allowance set aside plus the minutes the hold pays for. Tell the audio server. */
      maxDurationSeconds: number;
      holdCents: number;
      allowanceSeconds: number;
      country: string;
      /** US dollars per minute at this destination and direction. */
      ratePerMinute: number;
    }
  | { ok: false; reason: CallRefusal; message: string };

export interface CallSettlement {
  seconds: number;
  /** Seconds the plan's allowance covered. */
  allowanceSeconds: number;
  /** Seconds paid from the balance (charged per started minute). */
  paidSeconds: number;
  chargedCents: number;
}

/** What calls ask of billing (BillingAccount implements it). */
export type CallBilling = Pick<
  BillingAccount,
  'balanceCents' | 'reserve' | 'settle' | 'refund' | 'recordUsage' | 'allowances'
>;

export interface CallChargeDeps {
  store: CallChargeStore;
  billing: CallBilling;
  clock: Clock;
  /** Per-minute rates in ten-thousandths of a dollar (the voice pricing data), by ISO country. */
  rate: (country: string, direction: CallDirection) => number | null;
  /** Calls one user may have open at once: CALL_CONCURRENCY_PER_USER, or more when the user's plan says so. */
  concurrencyLimit: (planKey: string | null) => number;
  /** The longest call when the caller names none (CALL_MAX_SECONDS). */
  defaultMaxSeconds: number;
}

/** Cents for `seconds` at `rate` (ten-thousandths of a dollar a minute): per started minute, rounded up to the next cent. */
export function callCostCents(seconds: number, rate: number): number {
  if (seconds <= 0) return 0;
  return Math.ceil((Math.ceil(seconds / 60) * rate) / 100);
}

/** The terms a charge is inserted with, or why it is refused. */
type ChargeTerms =
  | { ok: true; allowanceSeconds: number; maxSeconds: number; holdCents: number }
  | { ok: false; reason: CallRefusal; message: string };

/** The HTTP error of a refusal (402 / 429 / 400). */
export function refusalError(refusal: { reason: CallRefusal; message: string }): AppError {
  return new AppError(refusal.reason, refusal.message);
}

const holdRef = (ref: string) => `call:${ref}`;
/** Attempts at inserting a charge when other starts or settlements of the same user keep changing its terms. */
const ATTEMPTS = 25;

export class CallCharges {
  /** One authorization per user at a time on this instance, so its own starts never race (other instances: the store's check). */
  private readonly perUser = new Map<string, { slots: Slots; users: number }>();

  constructor(private readonly deps: CallChargeDeps) {}

  async authorizeCall(
    userId: string,
    input: { ref: string; direction: CallDirection; number?: string; country?: string; maxDurationSeconds?: number },
  ): Promise<CallAuthorization> {
    const country = input.country ?? (input.number ? countryOfNumber(input.number) : null);
    const rate = country ? this.deps.rate(country, input.direction) : null;
    if (!country || rate === null) {
      return {
        ok: false,
        reason: 'unsupported_destination',
        message: `calls ${input.direction === 'inbound' ? 'to numbers in' : 'to'} ${country ?? input.number ?? 'this destination'} are not offered (GET /api/pricing/voice-countries lists the countries)`,
      };
    }
    const wanted = Math.max(1, Math.floor(input.maxDurationSeconds ?? this.deps.defaultMaxSeconds));
    return this.open(userId, { ref: input.ref, direction: input.direction, country, rate }, (snapshot) =>
      this.terms(userId, input.direction, rate, wanted, snapshot),
    );
  }

  /**
   * Whether one outbound minute to `number` could be paid now, from the
   * plan's allowance or the balance, without holding anything (a campaign's
   * start and resume: 402 otherwise). The concurrency limit is not asked: a
   * campaign waits for a free slot.
   */
  async affordsOneMinute(userId: string, number: string): Promise<{ ok: true } | { ok: false; message: string }> {
    const country = countryOfNumber(number);
    const rate = country ? this.deps.rate(country, 'outbound') : null;
    if (!country || rate === null) return { ok: false, message: `calls to ${number} are not offered` };
    const snapshot = await this.deps.store.snapshot(userId);
    const terms = await this.terms(userId, 'outbound', rate, 60, { ...snapshot, open: 0 });
    return terms.ok || terms.reason === 'concurrency_limit' ? { ok: true } : { ok: false, message: terms.message };
  }

  /** Whether calls to `number` are offered in `direction` (the voice pricing data has its country). */
  priced(number: string, direction: CallDirection): boolean {
    const country = countryOfNumber(number);
    return country !== null && this.deps.rate(country, direction) !== null;
  }

  /**
   * Authorizes a leg the service dials for the call `parentRef` (a
   * transfer's `<Dial>`; later a pathway's transfer node): priced like an
   * outbound call to `number` (unpriced: `unsupported_destination`), at that
   * rate plus the parent's own rate, because the parent's line stays open on
   * the carrier while the leg talks. Paid from the balance only: the plan's
   * included minutes are the account's calls, not the numbers its calls
   * dial, so no allowance is set aside and no usage recorded. It counts
   * against the concurrency limit, taking over its parent's slot (the
   * parent is about to end; its own minutes stop at the transfer). The
   * answer's `maxDurationSeconds` is the carrier's `<Dial timeLimit>`.
   */
  async authorizeLeg(
    userId: string,
    input: { ref: string; parentRef: string; number: string; maxDurationSeconds?: number },
  ): Promise<CallAuthorization> {
    const country = countryOfNumber(input.number);
    const rate = country ? this.deps.rate(country, 'outbound') : null;
    if (!country || rate === null) {
      return {
        ok: false,
        reason: 'unsupported_destination',
        message: `calls to ${country ?? input.number} are not offered (GET /api/pricing/voice-countries lists the countries)`,
      };
    }
    const parent = await this.deps.store.find(input.parentRef);
    if (parent && parent.user_id !== userId)
      throw new AppError('conflict', `call ${input.parentRef} is not this user's`);
    const legRate = rate + (parent ? Number(parent.rate) : 0);
    const parentOpen = parent?.state === 'open' ? 1 : 0;
    const wanted = Math.max(
      1,
      Math.min(this.deps.defaultMaxSeconds, Math.floor(input.maxDurationSeconds ?? this.deps.defaultMaxSeconds)),
    );
    return this.open(userId, { ref: input.ref, direction: LEG_DIRECTION, country, rate: legRate }, async (snapshot) => {
      const [{ period }, balance] = await Promise.all([
        this.deps.billing.allowances(userId, []),
        this.deps.billing.balanceCents(userId),
      ]);
      const limit = this.deps.concurrencyLimit(period.planKey);
      if (snapshot.open - parentOpen >= limit)
        return {
          ok: false,
          reason: 'concurrency_limit',
          message: `at most ${limit} calls may be under way at once on this account`,
        };
      const payableMinutes =
        legRate === 0 ? Math.ceil(wanted / 60) : Math.floor((Math.max(0, balance) * 100) / legRate);
      if (payableMinutes === 0) {
        return {
          ok: false,
          reason: 'insufficient_funds',
          message: `the prepaid balance does not cover one minute of this transfer ($${(legRate / 10_000).toFixed(4)} a minute): top up with POST /api/credits/add`,
        };
      }
      const maxSeconds = Math.min(wanted, payableMinutes * 60);
      return { ok: true, allowanceSeconds: 0, maxSeconds, holdCents: callCostCents(maxSeconds, legRate) };
    });
  }

  /**
   * Inserts the charge on the terms `termsOf` works out from the user's
   * charges as they are, then makes its hold. The insert checks those
   * charges are unchanged (else the terms are worked out again), so no two
   * starts share a slot or allowance seconds.
   */
  private async open(
    userId: string,
    charge: { ref: string; direction: string; country: string; rate: number },
    termsOf: (snapshot: ChargeSnapshot) => Promise<ChargeTerms>,
  ): Promise<CallAuthorization> {
    return this.serialized(userId, async () => {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const snapshot = await this.deps.store.snapshot(userId);
        const terms = await termsOf(snapshot);
        if (!terms.ok) return terms;
        const now = this.deps.clock.now();
        const inserted = await this.deps.store.insertIfUnchanged(
          {
            ref: charge.ref,
            user_id: userId,
            direction: charge.direction,
            country: charge.country,
            rate: charge.rate,
            max_seconds: terms.maxSeconds,
            allowance_seconds: terms.allowanceSeconds,
            allowance_call: terms.allowanceSeconds > 0 ? 1 : 0,
            hold_cents: terms.holdCents,
            state: 'open',
            seconds: null,
            charged_cents: null,
            created_at: now,
            settled_at: null,
          },
          snapshot,
        );
        if (!inserted) {
          if (await this.deps.store.find(charge.ref))
            throw new AppError('conflict', `call ${charge.ref} was authorized before`);
          // Another instance started or settled a call of this user meanwhile: work the terms out again.
          await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 10 * (attempt + 1)));
          continue;
        }
        if (terms.holdCents > 0) {
          try {
            await this.deps.billing.reserve(userId, terms.holdCents, holdRef(charge.ref));
          } catch (err) {
            // No hold was made (the balance fell meanwhile): the charge closes, nothing to settle.
            await this.deps.store.close(charge.ref, {
              state: 'refused',
              seconds: 0,
              chargedCents: 0,
              allowanceSeconds: 0,
              now: this.deps.clock.now(),
            });
            if (err instanceof AppError && err.code === 'insufficient_funds')
              return { ok: false, reason: 'insufficient_funds', message: err.message };
            throw err;
          }
        }
        return {
          ok: true,
          ref: charge.ref,
          maxDurationSeconds: terms.maxSeconds,
          holdCents: terms.holdCents,
          allowanceSeconds: terms.allowanceSeconds,
          country: charge.country,
          ratePerMinute: charge.rate / 10_000,
        };
      }
      throw new AppError('conflict', 'too many calls are being started at once: try again');
    });
  }

  /**
   * Ends the call's charge once: its seconds come from the allowance set
   * aside first, the rest is charged per started minute (never more than the
   * hold), usage is recorded and the hold settled or refunded. Calling it
   * again (a retried finish, housekeeping, another instance) only finishes
   * what a failure left undone and charges nothing twice. Null for a call
   * that was never charged (a temporary test call).
   */
  async settleCall(ref: string, input: { seconds: number }): Promise<CallSettlement | null> {
    const { store, billing, clock } = this.deps;
    let charge = await store.find(ref);
    if (!charge) return null;
    const direction = charge.direction as CallDirection;
    // A dialled leg is not a call of the plan: it records no usage (it set no allowance aside either).
    const countsAsUsage = charge.direction !== LEG_DIRECTION;
    if (charge.state === 'open') {
      const seconds = Math.max(0, Math.floor(input.seconds));
      const allowanceSeconds = Math.min(seconds, Number(charge.allowance_seconds));
      const chargedCents = Math.min(
        Number(charge.hold_cents),
        callCostCents(seconds - allowanceSeconds, Number(charge.rate)),
      );
      // Usage before the close: a start that reads the allowance in between sees these seconds both used and set
      // aside (too little left, never too much); once the charge is closed, only as used. Both are idempotent by ref.
      if (seconds > 0 && countsAsUsage) {
        await billing.recordUsage(charge.user_id, `calls_${direction}`, 1, `call:${ref}`);
        await billing.recordUsage(charge.user_id, `seconds_${direction}`, seconds, `call:${ref}:seconds`);
      }
      await store.close(ref, { state: 'settled', seconds, chargedCents, allowanceSeconds, now: clock.now() });
      charge = (await store.find(ref))!;
    }
    if (charge.state !== 'settled') return null;
    const charged = Number(charge.charged_cents ?? 0);
    if (Number(charge.hold_cents) > 0) {
      if (charged > 0) await billing.settle(holdRef(ref), charged);
      else await billing.refund(holdRef(ref));
    }
    const seconds = Number(charge.seconds ?? 0);
    return {
      seconds,
      allowanceSeconds: Number(charge.allowance_seconds),
      paidSeconds: seconds - Number(charge.allowance_seconds),
      chargedCents: charged,
    };
  }

  /** A transfer leg's redirect to <Dial> was taken by the carrier (housekeeping then settles an unreported leg at its maximum, not at nothing). */
  markLegDialled(ref: string): Promise<void> {
    return this.deps.store.markDialled(ref, this.deps.clock.now());
  }

  /**
   * Housekeeping: closes charges whose call session was never recorded (the
   * process stopped between authorizing and recording the call, or a caller
   * of authorizeCall never settled): nothing was used, the hold goes back and
   * the concurrency slot is free again. Calls that were recorded settle when
   * they end (CallService.finishAbandoned / failStalled). Dialled legs whose
   * carrier never sent their final duration are settled at their authorized
   * maximum (the carrier's `<Dial timeLimit>`: the most it can have carried),
   * legs never dialled (markLegDialled) at nothing:
   * `olderThanMs` is past any leg's end. Returns how many.
   */
  async closeOrphans(olderThanMs: number): Promise<number> {
    let closed = 0;
    const before = this.deps.clock.now() - olderThanMs;
    for (const ref of await this.deps.store.listOrphans(before, 100)) {
      if (await this.settleCall(ref, { seconds: 0 })) closed++;
    }
    for (const leg of await this.deps.store.listOpenLegs(before, 100)) {
      // Dialled: the most the carrier can have carried; never dialled (the process stopped before the redirect): nothing.
      if (await this.settleCall(leg.ref, { seconds: leg.dialled ? leg.maxSeconds : 0 })) closed++;
    }
    return closed;
  }

  /** The charge's terms from the allowance left, the balance and the concurrency limit, or why the call is refused. */
  private async terms(
    userId: string,
    direction: CallDirection,
    rate: number,
    wanted: number,
    snapshot: ChargeSnapshot,
  ): Promise<ChargeTerms> {
    const { billing } = this.deps;
    const seconds = `seconds_${direction}` as const;
    const calls = `calls_${direction}` as const;
    // One read of the plan and one of the usage for both allowances (each on its own read the plan three times).
    const [{ period, remaining }, balance] = await Promise.all([
      billing.allowances(userId, [seconds, calls]),
      billing.balanceCents(userId),
    ]);
    const secondsLeft = remaining[seconds];
    const callsLeft = remaining[calls];
    const limit = this.deps.concurrencyLimit(period.planKey);
    if (snapshot.open >= limit) {
      return {
        ok: false,
        reason: 'concurrency_limit',
        message: `at most ${limit} calls may be under way at once on this account`,
      };
    }
    const inFlight = snapshot.byDirection[direction] ?? { open: 0, allowanceSeconds: 0, allowanceCalls: 0 };
    const allowanceSeconds =
      callsLeft - inFlight.allowanceCalls > 0
        ? Math.min(wanted, Math.max(0, secondsLeft - inFlight.allowanceSeconds))
        : 0;
    // Whole minutes the balance pays for at this rate (a free destination: all of them).
    const payableMinutes = rate === 0 ? Math.ceil(wanted / 60) : Math.floor((Math.max(0, balance) * 100) / rate);
    if (allowanceSeconds === 0 && payableMinutes === 0) {
      return {
        ok: false,
        reason: 'insufficient_funds',
        message: `no plan allowance left for ${direction} calls and the prepaid balance does not cover one minute ($${(rate / 10_000).toFixed(4)}): top up with POST /api/credits/add`,
      };
    }
    const paidSeconds = Math.min(wanted - allowanceSeconds, payableMinutes * 60);
    return {
      ok: true,
      allowanceSeconds,
      maxSeconds: allowanceSeconds + paidSeconds,
      holdCents: callCostCents(paidSeconds, rate),
    };
  }

  private async serialized<T>(userId: string, work: () => Promise<T>): Promise<T> {
    let entry = this.perUser.get(userId);
    if (!entry) this.perUser.set(userId, (entry = { slots: new Slots(1), users: 0 }));
    entry.users += 1;
    const release = await entry.slots.acquire();
    try {
      return await work();
    } finally {
      release();
      entry.users -= 1;
      if (entry.users === 0) this.perUser.delete(userId);
    }
  }
}
