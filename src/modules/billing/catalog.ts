// Plans and voice rates: data, not code. Built-in defaults (data/*.ts), or a
// JSON file named by PLANS_FILE / VOICE_PRICING_FILE, checked at start-up so a
// bad file stops the server instead of billing wrongly.
import { readFileSync } from 'node:fs';
import type { PlanPrice } from '../../providers/payments/interface.js';
import type { UsageKind } from './account.js';
import { type PlanDefinition, defaultPlans } from './data/plans.js';
import { type VoiceRateDefinition, defaultVoiceRates } from './data/voice-pricing.js';

export const usageKinds: UsageKind[] = [
  'seconds_inbound',
  'seconds_outbound',
  'calls_inbound',
  'calls_outbound',
  'leads',
];

export interface Plan extends PlanDefinition {
  monthlyCents: number;
}

/** What a payment provider needs of a plan. */
export const priceOf = (plan: Plan): PlanPrice => ({
  key: plan.key,
  name: plan.name,
  monthlyCents: plan.monthlyCents,
  ...(plan.stripePriceId ? { stripePriceId: plan.stripePriceId } : {}),
});

export class CatalogError extends Error {}

const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function readJson(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CatalogError(`${what}: cannot read ${file}: ${(err as Error).message}`);
  }
}

export function checkPlans(value: unknown, source: string): Plan[] {
  const list = Array.isArray(value) ? value : (value as { plans?: unknown })?.plans;
  if (!Array.isArray(list) || list.length === 0)
    throw new CatalogError(`${source}: expected a non-empty array of plans`);
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const p = raw as Partial<PlanDefinition>;
    const where = `${source}: plan ${i + 1}`;
    if (typeof p.key !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(p.key))
      throw new CatalogError(`${where}: key must be lower-case letters, digits, - or _`);
    if (seen.has(p.key)) throw new CatalogError(`${where}: duplicate key ${p.key}`);
    seen.add(p.key);
    const monthlyCents = Math.round(Number(p.priceUsd) * 100);
    if (typeof p.priceUsd !== 'number' || !(p.priceUsd > 0) || Math.abs(monthlyCents - p.priceUsd * 100) > 1e-6) {
      throw new CatalogError(`${where}: priceUsd must be a positive amount in whole cents`);
    }
    const included = (p.included ?? {}) as Record<string, unknown>;
    for (const kind of usageKinds)
      if (!isCount(included[kind])) throw new CatalogError(`${where}: included.${kind} must be a whole number ≥ 0`);
    if (
      p.stripePriceId !== undefined &&
      (typeof p.stripePriceId !== 'string' || !p.stripePriceId.startsWith('price_'))
    ) {
      throw new CatalogError(`${where}: stripePriceId must be a Stripe price id (price_…)`);
    }
    if (
      p.callConcurrency !== undefined &&
      !(Number.isInteger(p.callConcurrency) && p.callConcurrency >= 1 && p.callConcurrency <= 10_000)
    ) {
      throw new CatalogError(`${where}: callConcurrency must be a whole number from 1 to 10000`);
    }
    return {
      key: p.key,
      name: typeof p.name === 'string' && p.name ? p.name : p.key,
      priceUsd: p.priceUsd,
      monthlyCents,
      included: Object.fromEntries(usageKinds.map((k) => [k, included[k] as number])) as Record<UsageKind, number>,
      ...(p.stripePriceId ? { stripePriceId: p.stripePriceId } : {}),
      ...(p.callConcurrency !== undefined ? { callConcurrency: p.callConcurrency } : {}),
    };
  });
}

export function checkVoiceRates(value: unknown, source: string): VoiceRateDefinition[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new CatalogError(`${source}: expected a non-empty array of countries`);
  const seen = new Set<string>();
  return value.map((raw, i) => {
    const r = raw as Partial<VoiceRateDefinition>;
    const where = `${source}: entry ${i + 1}`;
    if (typeof r.country !== 'string' || !/^[A-Z]{2}$/.test(r.country))
      throw new CatalogError(`${where}: country must be an ISO 3166-1 alpha-2 code`);
    if (seen.has(r.country)) throw new CatalogError(`${where}: duplicate country ${r.country}`);
    seen.add(r.country);
    if (!isCount(r.inbound) || !isCount(r.outbound))
      throw new CatalogError(`${where}: inbound and outbound must be whole ten-thousandths of a dollar`);
    return {
      country: r.country,
      name: typeof r.name === 'string' && r.name ? r.name : r.country,
      inbound: r.inbound!,
      outbound: r.outbound!,
    };
  });
}

export interface Catalog {
  plans: Plan[];
  voiceRates: VoiceRateDefinition[];
  plan(key: string): Plan | undefined;
  /** Per-minute rate of a country and direction in ten-thousandths of a dollar; null when the country is not priced. */
  voiceRate(country: string, direction: 'inbound' | 'outbound'): number | null;
}

export function loadCatalog(files: { plansFile: string | null; voicePricingFile: string | null }): Catalog {
  const plans = files.plansFile
    ? checkPlans(readJson(files.plansFile, 'PLANS_FILE'), 'PLANS_FILE')
    : checkPlans(defaultPlans, 'built-in plans');
  const voiceRates = files.voicePricingFile
    ? checkVoiceRates(readJson(files.voicePricingFile, 'VOICE_PRICING_FILE'), 'VOICE_PRICING_FILE')
    : checkVoiceRates(defaultVoiceRates, 'built-in voice rates');
  const byKey = new Map(plans.map((p) => [p.key, p]));
  const rates = new Map(voiceRates.map((r) => [r.country, r]));
  return {
    plans,
    voiceRates,
    plan: (key) => byKey.get(key),
    voiceRate: (country, direction) => rates.get(country)?.[direction] ?? null,
  };
}
