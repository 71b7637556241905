import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { CONFIG_SECTIONS } from '../src/config/sections.js';

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env, '/srv');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('loadConfig', () => {
  it('gives working defaults for an empty environment', () => {
    const config = loadConfig({}, '/srv');
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: '/srv/data',
      databaseUrl: null,
      publicUrl: 'http://127.0.0.1:3000',
      twilio: null,
      smtp: null,
    });
    expect(config.returnUrlOrigins).toEqual(['http://127.0.0.1:3000']);
  });

  it('reports every bad variable together, by name', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      MASTER_KEY: 'short',
      TWILIO_ACCOUNT_SID: 'AC1',
      DATABASE_URL: 'mysql://x',
    });
    expect(problems.join('\n')).toMatch(/PORT/);
    expect(problems.join('\n')).toMatch(/MASTER_KEY must be 32 bytes/);
    expect(problems.join('\n')).toMatch(/TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM must be set together/);
    expect(problems.join('\n')).toMatch(/DATABASE_URL must be a postgres: or postgresql: URL/);
  });

  it('requires shared secrets with PostgreSQL', () => {
    const problems = problemsOf({ DATABASE_URL: 'postgres://u:p@localhost/db' });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^MASTER_KEY is required/),
        expect.stringMatching(/^JWT_SECRET is required/),
      ]),
    );
  });

  it('parses METRICS_PORT, METRICS_TOKEN and JWT_SECRET_ROTATE, and names bad values', () => {
    const config = loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'a-long-enough-token', JWT_SECRET_ROTATE: '1' });
    expect(config).toMatchObject({ metricsPort: 9464, metricsToken: 'a-long-enough-token', jwtSecretRotate: true });
    expect(loadConfig({})).toMatchObject({ metricsPort: null, metricsToken: null, jwtSecretRotate: false });
    const problems = problemsOf({ PORT: '4000', METRICS_PORT: '4000', METRICS_TOKEN: 'short' }).join('\n');
    expect(problems).toMatch(/METRICS_PORT must differ from PORT/);
    expect(problems).toMatch(/METRICS_TOKEN must be at least 16 characters/);
    expect(problemsOf({ METRICS_PORT: 'ninety' }).join('\n')).toMatch(/METRICS_PORT must be a whole number/);
  });

  it('parses OIDC providers and names the missing variables of one', () => {
    const config = loadConfig({
      OIDC_PROVIDERS: 'corp-sso',
      OIDC_CORP_SSO_ISSUER: 'https://id.example.com',
      OIDC_CORP_SSO_CLIENT_ID: 'c',
      OIDC_CORP_SSO_CLIENT_SECRET: 's',
    });
    expect(config.oidcProviders).toEqual([
      {
        slug: 'corp-sso',
        name: 'corp-sso',
        issuer: 'https://id.example.com',
        clientId: 'c',
        clientSecret: 's',
        scopes: 'openid email profile',
      },
    ]);
    expect(problemsOf({ OIDC_PROVIDERS: 'google' })[0]).toMatch(
      /OIDC_GOOGLE_ISSUER, OIDC_GOOGLE_CLIENT_ID and OIDC_GOOGLE_CLIENT_SECRET are required/,
    );
  });
});

describe('web calls', () => {
  it('defaults: 600 s at most, 2 at once per user, 20 started per hour; each is checked', () => {
    const config = loadConfig({ NODE_ENV: 'production', ALLOW_SANDBOX: '1' }, '/srv');
    expect(config.webCalls).toEqual({ maxSeconds: 600, concurrencyPerUser: 2 });
    expect(config.rateLimits.webCallsPerUser).toEqual({ limit: 20, windowMs: 3_600_000 });
    expect(
      loadConfig(
        { WEB_CALL_MAX_SECONDS: '120', WEB_CALL_CONCURRENCY_PER_USER: '5', RATE_LIMIT_WEB_CALLS_PER_USER: '50/1h' },
        '/srv',
      ),
    ).toMatchObject({
      webCalls: { maxSeconds: 120, concurrencyPerUser: 5 },
      rateLimits: { webCallsPerUser: { limit: 50, windowMs: 3_600_000 } },
    });
    expect(problemsOf({ WEB_CALL_MAX_SECONDS: '1' })[0]).toMatch(/WEB_CALL_MAX_SECONDS/);
    expect(problemsOf({ WEB_CALL_CONCURRENCY_PER_USER: '0' })[0]).toMatch(/WEB_CALL_CONCURRENCY_PER_USER/);
  });
});

describe('media sockets before their token', () => {
  it('defaults: 8 per remote address, 200 in all; each is checked', () => {
    expect(loadConfig({}, '/srv').mediaSockets).toEqual({ unauthenticatedPerAddress: 8, unauthenticatedTotal: 200 });
    expect(
      loadConfig({ MEDIA_UNAUTHENTICATED_PER_ADDRESS: '64', MEDIA_UNAUTHENTICATED_MAX: '1000' }, '/srv').mediaSockets,
    ).toEqual({ unauthenticatedPerAddress: 64, unauthenticatedTotal: 1000 });
    expect(problemsOf({ MEDIA_UNAUTHENTICATED_PER_ADDRESS: '0' })[0]).toMatch(/MEDIA_UNAUTHENTICATED_PER_ADDRESS/);
    expect(problemsOf({ MEDIA_UNAUTHENTICATED_MAX: 'lots' })[0]).toMatch(/MEDIA_UNAUTHENTICATED_MAX/);
  });
});

describe('charges for calls and SMS', () => {
  it('defaults: 5 calls at once, an hour at most, $0.0079 an SMS segment; each is checked', () => {
    expect(loadConfig({}, '/srv').billing).toMatchObject({
      callConcurrencyPerUser: 5,
      callMaxSeconds: 3600,
      smsSegmentPrice: 79,
    });
    expect(
      loadConfig({ CALL_CONCURRENCY_PER_USER: '12', CALL_MAX_SECONDS: '600', SMS_PRICE_USD: '0.04' }, '/srv').billing,
    ).toMatchObject({ callConcurrencyPerUser: 12, callMaxSeconds: 600, smsSegmentPrice: 400 });
    expect(problemsOf({ CALL_CONCURRENCY_PER_USER: '0' })[0]).toMatch(/CALL_CONCURRENCY_PER_USER/);
    expect(problemsOf({ CALL_MAX_SECONDS: '10' })[0]).toMatch(/CALL_MAX_SECONDS/);
    for (const bad of ['free', '0', '0.00001', '-1', '11'])
      expect(problemsOf({ SMS_PRICE_USD: bad })[0]).toMatch(/SMS_PRICE_USD/);
  });
});

// Each test starts src/main.ts through tsx, which takes far longer than usual on
// a loaded CI (the real-time calls run beside this file).
describe('start-up (src/main.ts)', { timeout: 90_000 }, () => {
  const run = (env: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'wsapi-main-'));
    try {
      const { DATABASE_URL: _ignored, ...parent } = process.env;
      return spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...parent, DATA_DIR: dir, PORT: '0', ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('stops with exit 2 and names the variable when the configuration is bad', () => {
    const result = run({ PORT: 'not-a-port' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('PORT must be a whole number');
  });

  it('refuses to start in production with sandbox providers unless ALLOW_SANDBOX=1', () => {
    const result = run({ NODE_ENV: 'production' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('refusing to start in production with sandbox providers');
    expect(result.stderr).toContain('sms: sandbox');
  });
});

describe('loadConfig: operations', () => {
  it('uses localhost in links when listening on every interface without PUBLIC_URL, and says so', () => {
    for (const host of ['0.0.0.0', '::']) {
      const config = loadConfig({ HOST: host, PORT: '8080' }, '/srv');
      expect(config.publicUrl).toBe('http://localhost:8080');
      expect(config.returnUrlOrigins).toEqual(['http://localhost:8080']);
      expect(config.warnings).toEqual([expect.stringContaining(`HOST=${host} without PUBLIC_URL`)]);
    }
    const config = loadConfig({ HOST: '0.0.0.0', PUBLIC_URL: 'https://ws.example.com' }, '/srv');
    expect(config.publicUrl).toBe('https://ws.example.com');
    expect(config.warnings).toEqual([]);
    expect(loadConfig({ HOST: '::1' }, '/srv').publicUrl).toBe('http://[::1]:3000');
  });

  it('checks LOG_LEVEL against the pino levels', () => {
    expect(problemsOf({ LOG_LEVEL: 'verbose' })).toEqual([
      expect.stringMatching(/^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/),
    ]);
    expect(loadConfig({ LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
  });

  it('reads DATABASE_CONNECT_TIMEOUT_SECONDS', () => {
    expect(loadConfig({}).databaseConnectTimeoutMs).toBe(30_000);
    expect(loadConfig({ DATABASE_CONNECT_TIMEOUT_SECONDS: '90' }).databaseConnectTimeoutMs).toBe(90_000);
    expect(problemsOf({ DATABASE_CONNECT_TIMEOUT_SECONDS: 'soon' })[0]).toMatch(/DATABASE_CONNECT_TIMEOUT_SECONDS/);
  });

  it('checks CORS_ORIGINS entries are origins', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example.com, http://localhost:*' }).corsOrigins).toEqual([
      'https://a.example.com',
      'http://localhost:*',
    ]);
    expect(problemsOf({ CORS_ORIGINS: 'https://a.example.com/app' })[0]).toMatch(
      /CORS_ORIGINS: "https:\/\/a.example.com\/app" must be an origin/,
    );
    expect(problemsOf({ CORS_ORIGINS: 'a.example.com' })[0]).toMatch(/CORS_ORIGINS must be a http: or https: URL/);
  });
});

describe('loadConfig: live-call timing', () => {
  it('defaults to the numbers of DESIGN "Voice agent" and reads VOICE_* variables', () => {
    expect(loadConfig({}, '/srv').voice).toEqual({
      endpointMinMs: 500,
      endpointMaxMs: 3000,
      bargeInMs: 300,
      llmDeadlineMs: 4000,
      askModelAhead: true,
      repromptMs: 8000,
      maxReprompts: 2,
    });
    const config = loadConfig(
      {
        VOICE_ENDPOINT_MIN_MS: '400',
        VOICE_ENDPOINT_MAX_MS: '2000',
        VOICE_BARGE_IN_MS: '250',
        VOICE_LLM_DEADLINE_MS: '3000',
        VOICE_ASK_MODEL_AHEAD: '0',
        VOICE_REPROMPT_MS: '6000',
        VOICE_MAX_REPROMPTS: '1',
      },
      '/srv',
    );
    expect(config.voice).toEqual({
      endpointMinMs: 400,
      endpointMaxMs: 2000,
      bargeInMs: 250,
      llmDeadlineMs: 3000,
      askModelAhead: false,
      repromptMs: 6000,
      maxReprompts: 1,
    });
  });

  it('refuses out-of-range values and a minimum above the maximum', () => {
    expect(() => loadConfig({ VOICE_BARGE_IN_MS: '0' }, '/srv')).toThrow(/VOICE_BARGE_IN_MS must be a whole number/);
    expect(() => loadConfig({ VOICE_ENDPOINT_MIN_MS: '4000', VOICE_ENDPOINT_MAX_MS: '3000' }, '/srv')).toThrow(
      /VOICE_ENDPOINT_MIN_MS \(4000\) must not exceed/,
    );
  });
});

describe('the declarations (src/config/)', () => {
  it('report every bad variable of every section in one error, each once', () => {
    let error: unknown;
    try {
      loadConfig(
        {
          PORT: 'eighty',
          LOG_LEVEL: 'loud',
          EVENTS_POLL_MS: '1',
          SMTP_URL: 'http://mail.example.com',
          CREDITS_TOPUP_USD: '1',
          KNOWLEDGE_MAX_FILES: '0',
          LEAD_PRICE_USD: 'free',
          SANDBOX_CALLS: 'later',
          VOICE_LLM_DEADLINE_MS: '10',
          VOICE_ENDPOINT_MIN_MS: '5000',
        },
        '/srv',
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    const named = ['PORT', 'LOG_LEVEL', 'EVENTS_POLL_MS', 'SMTP_URL', 'CREDITS_TOPUP_USD', 'KNOWLEDGE_MAX_FILES'];
    named.push('LEAD_PRICE_USD', 'SANDBOX_CALLS', 'VOICE_LLM_DEADLINE_MS', 'VOICE_ENDPOINT_MIN_MS');
    for (const name of named)
      expect(
        problems.filter((p) => p.startsWith(`${name} `)),
        name,
      ).toHaveLength(1);
    expect(problems).toHaveLength(named.length);
    expect((error as ConfigError).message.split('\n')).toHaveLength(named.length + 1);
  });

  it('generate docs/configuration.md as committed (scripts/write-config-docs.ts --check)', () => {
    const check = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/write-config-docs.ts', '--check'], {
      encoding: 'utf8',
    });
    expect(check.stderr + check.stdout).toContain('docs/configuration.md matches');
    expect(check.status).toBe(0);
  });

  it('give every variable a doc line and a default as shown', () => {
    for (const section of CONFIG_SECTIONS)
      for (const variable of section.variables) {
        expect(variable.doc.trim(), variable.name).not.toBe('');
        expect(variable.shown.trim(), variable.name).not.toBe('');
      }
    const names = CONFIG_SECTIONS.flatMap((s) => s.variables.map((v) => v.name));
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });
});
