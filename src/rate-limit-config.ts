// Rate limits from the environment: every rule of defaultRateLimits can be set
// with RATE_LIMIT_<RULE>=<n>/<window> (e.g. RATE_LIMIT_LOGIN_PER_IP=30/15m) or
// all at once with RATE_LIMITS='{"loginPerIp":"30/15m"}'; a RATE_LIMIT_<RULE>
// variable wins over RATE_LIMITS. Development starts from relaxed defaults.
// This file owns the rules' types and defaults; src/config.ts reads them from here.

export interface RateLimitRule {
  /** Requests allowed per window. */
  limit: number;
  windowMs: number;
}

export interface RateLimits {
  registerPerIp: RateLimitRule;
  loginPerIp: RateLimitRule;
  loginPerEmail: RateLimitRule;
  verifyRequestPerPhone: RateLimitRule;
  verifyRequestPerUser: RateLimitRule;
  verifyRequestPerIp: RateLimitRule;
  verifySubmitPerUser: RateLimitRule;
  twoFactorPerUser: RateLimitRule;
  resetRequestPerIp: RateLimitRule;
  resetRequestPerEmail: RateLimitRule;
  resetSubmitPerIp: RateLimitRule;
  /** "Someone tried to sign up with your email" notices per email (more are dropped silently: a 429 would tell the email exists). */
  signupNoticePerEmail: RateLimitRule;
  /** Started external sign-in flows (each writes a row) per IP. */
  externalInitPerIp: RateLimitRule;
  /** SMS sent through POST /api/sms/messages, per user. */
  smsSendPerUser: RateLimitRule;
  /** Payment pages opened (checkouts, portal sessions: each calls the payment provider) per user. */
  billingSessionsPerUser: RateLimitRule;
  /** Temporary-session codes sent (PUT /api/session/temporary), per user, per phone and per IP: each is an SMS and leads to a call (toll fraud). */
  temporarySessionPerUser: RateLimitRule;
  temporarySessionPerPhone: RateLimitRule;
  temporarySessionPerIp: RateLimitRule;
  /** Temporary-session code submissions (POST /api/session/temporary), per user. */
  temporarySubmitPerUser: RateLimitRule;
  /** Voice previews spoken by a paid provider (ElevenLabs), per user. */
  voicePreviewPerUser: RateLimitRule;
  /** Characters of paid voice previews per user: `limit` characters per window (a day). Local previews do not count. */
  voicePreviewCharactersPerUser: RateLimitRule;
  /** Voice previews spoken locally (espeak-ng), per user: free, but they share the speech queue with calls. */
  localVoicePreviewPerUser: RateLimitRule;
  /** Web calls started (POST /api/calls/web), per user: free test calls, limited so they cannot be farmed. */
  webCallsPerUser: RateLimitRule;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const defaultRateLimits: RateLimits = {
  registerPerIp: { limit: 10, windowMs: HOUR },
  loginPerIp: { limit: 30, windowMs: 15 * MINUTE },
  loginPerEmail: { limit: 10, windowMs: 15 * MINUTE },
  verifyRequestPerPhone: { limit: 1, windowMs: MINUTE },
  verifyRequestPerUser: { limit: 5, windowMs: HOUR },
  verifyRequestPerIp: { limit: 20, windowMs: HOUR },
  verifySubmitPerUser: { limit: 20, windowMs: HOUR },
  twoFactorPerUser: { limit: 10, windowMs: 15 * MINUTE },
  resetRequestPerIp: { limit: 10, windowMs: HOUR },
  resetRequestPerEmail: { limit: 3, windowMs: HOUR },
  resetSubmitPerIp: { limit: 20, windowMs: HOUR },
  signupNoticePerEmail: { limit: 3, windowMs: HOUR },
  externalInitPerIp: { limit: 60, windowMs: 15 * MINUTE },
  smsSendPerUser: { limit: 60, windowMs: MINUTE },
  billingSessionsPerUser: { limit: 30, windowMs: HOUR },
  temporarySessionPerUser: { limit: 5, windowMs: HOUR },
  temporarySessionPerPhone: { limit: 3, windowMs: HOUR },
  temporarySessionPerIp: { limit: 10, windowMs: HOUR },
  temporarySubmitPerUser: { limit: 30, windowMs: HOUR },
  voicePreviewPerUser: { limit: 30, windowMs: HOUR },
  voicePreviewCharactersPerUser: { limit: 10_000, windowMs: 24 * HOUR },
  localVoicePreviewPerUser: { limit: 60, windowMs: HOUR },
  webCallsPerUser: { limit: 20, windowMs: HOUR },
};

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Housekeeping drops counters a day old (services.ts), so no window may be longer. */
const MAX_WINDOW_MS = UNITS.d;

/** registerPerIp → REGISTER_PER_IP */
export function rateLimitEnvName(rule: string): string {
  return `RATE_LIMIT_${rule.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

/** "10/1h", "30/15m", "5/h" (one hour) → a rule; null when malformed. */
export function parseRateLimitRule(text: string): RateLimitRule | null {
  const match = /^\s*(\d{1,9})\s*\/\s*(\d{1,6})?\s*([smhd])\s*$/.exec(text);
  if (!match) return null;
  const windowMs = Number(match[2] ?? '1') * UNITS[match[3]];
  if (windowMs < 1000 || windowMs > MAX_WINDOW_MS) return null;
  return { limit: Number(match[1]), windowMs };
}

export function formatRateLimitRule(rule: RateLimitRule): string {
  for (const unit of ['d', 'h', 'm', 's']) {
    if (rule.windowMs % UNITS[unit] === 0) return `${rule.limit}/${rule.windowMs / UNITS[unit]}${unit}`;
  }
  return `${rule.limit}/${rule.windowMs / 1000}s`;
}

/**
 * Development defaults: ten times the requests in at most a minute, so trying
 * the API and re-running the README walkthrough never locks anyone out for long.
 */
export function developmentRateLimits(defaults: RateLimits): RateLimits {
  const relaxed = {} as Record<string, RateLimitRule>;
  for (const [name, rule] of Object.entries(defaults))
    relaxed[name] = { limit: rule.limit * 10, windowMs: Math.min(rule.windowMs, UNITS.m) };
  return relaxed as unknown as RateLimits;
}

export function parseRateLimits(
  env: Record<string, string | undefined>,
  defaults: RateLimits,
  problems: string[],
): RateLimits {
  const limits = { ...defaults } as Record<string, RateLimitRule>;
  const rules = Object.keys(defaults);
  const byEnvName = new Map(rules.map((rule) => [rateLimitEnvName(rule), rule]));
  const expected = '<requests>/<window>, the window in s, m, h or d up to 1d (e.g. 30/15m)';

  const json = (env.RATE_LIMITS ?? '').trim();
  if (json) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      parsed = null;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      problems.push(`RATE_LIMITS must be a JSON object such as {"loginPerIp":"30/15m"}`);
    } else {
      for (const [key, value] of Object.entries(parsed)) {
        const rule = rules.includes(key) ? key : (byEnvName.get(rateLimitEnvName(key)) ?? byEnvName.get(key));
        const parsedRule = typeof value === 'string' ? parseRateLimitRule(value) : null;
        if (!rule) problems.push(`RATE_LIMITS: unknown rule "${key}" (rules: ${rules.join(', ')})`);
        else if (!parsedRule) problems.push(`RATE_LIMITS: "${key}" must be ${expected} (got ${JSON.stringify(value)})`);
        else limits[rule] = parsedRule;
      }
    }
  }

  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('RATE_LIMIT_') || raw === undefined || raw.trim() === '') continue;
    const rule = byEnvName.get(name);
    const parsedRule = parseRateLimitRule(raw);
    if (!rule) problems.push(`${name} is not a rate limit rule (known: ${[...byEnvName.keys()].join(', ')})`);
    else if (!parsedRule) problems.push(`${name} must be ${expected} (got "${raw}")`);
    else limits[rule] = parsedRule;
  }
  return limits as unknown as RateLimits;
}
