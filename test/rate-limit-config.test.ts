// Every rate limit can be set from the environment; development starts from
// relaxed defaults, production (and tests) from the strict ones.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, defaultRateLimits, loadConfig } from '../src/config.js';
import { formatRateLimitRule, parseRateLimitRule, rateLimitEnvName } from '../src/rate-limit-config.js';
import { type TestApp, createTestApp } from './support/app.js';
import { createVerifiedUser } from './support/factories.js';

const MINUTE = 60_000;
const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('rate limit configuration', () => {
  it('names each rule RATE_LIMIT_<RULE> and reads <n>/<window>', () => {
    expect(rateLimitEnvName('loginPerIp')).toBe('RATE_LIMIT_LOGIN_PER_IP');
    expect(rateLimitEnvName('twoFactorPerUser')).toBe('RATE_LIMIT_TWO_FACTOR_PER_USER');
    expect(parseRateLimitRule('30/15m')).toEqual({ limit: 30, windowMs: 15 * MINUTE });
    expect(parseRateLimitRule('5/h')).toEqual({ limit: 5, windowMs: 60 * MINUTE });
    expect(parseRateLimitRule('100 / 30s')).toEqual({ limit: 100, windowMs: 30_000 });
    for (const bad of ['30', '30/15', 'x/1m', '30/2d', '-1/1m', '30/0s'])
      expect(parseRateLimitRule(bad), bad).toBeNull();
    expect(formatRateLimitRule({ limit: 30, windowMs: 15 * MINUTE })).toBe('30/15m');
    expect(formatRateLimitRule({ limit: 10, windowMs: 60 * MINUTE })).toBe('10/1h');
  });

  it('keeps the strict defaults in production and tests, and relaxes them in development', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).rateLimits).toEqual(defaultRateLimits);
    expect(loadConfig({ NODE_ENV: 'test' }).rateLimits).toEqual(defaultRateLimits);
    const dev = loadConfig({ NODE_ENV: 'development' }).rateLimits;
    for (const [name, rule] of Object.entries(defaultRateLimits)) {
      const relaxed = dev[name as keyof typeof dev];
      expect(relaxed.limit, name).toBeGreaterThan(rule.limit);
      expect(relaxed.windowMs, name).toBeLessThanOrEqual(MINUTE);
    }
  });

  it('takes one rule from RATE_LIMIT_<RULE>, several from RATE_LIMITS, the variable winning', () => {
    const limits = loadConfig({
      NODE_ENV: 'production',
      RATE_LIMITS: JSON.stringify({
        loginPerIp: '100/1m',
        RATE_LIMIT_REGISTER_PER_IP: '50/1h',
        resetRequestPerEmail: '9/1h',
      }),
      RATE_LIMIT_RESET_REQUEST_PER_EMAIL: '4/2h',
    }).rateLimits;
    expect(limits.loginPerIp).toEqual({ limit: 100, windowMs: MINUTE });
    expect(limits.registerPerIp).toEqual({ limit: 50, windowMs: 60 * MINUTE });
    expect(limits.resetRequestPerEmail).toEqual({ limit: 4, windowMs: 120 * MINUTE });
    expect(limits.loginPerEmail).toEqual(defaultRateLimits.loginPerEmail);
  });

  it('names unknown rules and malformed values', () => {
    expect(problemsOf({ RATE_LIMIT_LOGIN_PER_PLANET: '1/1m' })[0]).toMatch(
      /^RATE_LIMIT_LOGIN_PER_PLANET is not a rate limit rule/,
    );
    expect(problemsOf({ RATE_LIMIT_LOGIN_PER_IP: 'lots' })[0]).toMatch(
      /^RATE_LIMIT_LOGIN_PER_IP must be <requests>\/<window>/,
    );
    expect(problemsOf({ RATE_LIMITS: '[1]' })[0]).toMatch(/^RATE_LIMITS must be a JSON object/);
    expect(problemsOf({ RATE_LIMITS: '{"nope":"1/1m"}' })[0]).toMatch(/^RATE_LIMITS: unknown rule "nope"/);
    expect(problemsOf({ RATE_LIMITS: '{"loginPerIp":5}' })[0]).toMatch(/^RATE_LIMITS: "loginPerIp" must be/);
  });

  it('lists every rule in docs/operations.md with its production default', () => {
    const readme = readFileSync('docs/operations.md', 'utf8');
    for (const [name, rule] of Object.entries(defaultRateLimits)) {
      expect(readme, name).toMatch(
        new RegExp(`\`${rateLimitEnvName(name)}\` \\| \`${formatRateLimitRule(rule).replace('/', '\\/')}\``),
      );
    }
  });
});

describe('a configured limit applies to requests', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('RATE_LIMIT_LOGIN_PER_EMAIL=2/1m answers the third login 429', async () => {
    t = await createTestApp({
      config: { rateLimits: loadConfig({ NODE_ENV: 'production', RATE_LIMIT_LOGIN_PER_EMAIL: '2/1m' }).rateLimits },
    });
    const user = await createVerifiedUser(t);
    const login = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: user.email, password: 'wrong password here', remember: false },
      });
    expect((await login()).statusCode).not.toBe(429);
    expect((await login()).statusCode).not.toBe(429);
    const third = await login();
    expect(third.statusCode).toBe(429);
    expect(Number(third.headers['retry-after'])).toBeLessThanOrEqual(60);
  });
});
