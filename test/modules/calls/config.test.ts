// The calls and webhooks settings: parsed, defaulted and refused as documented.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;

describe('calls configuration', () => {
  it('defaults to the sandbox audio server and allows private webhook targets outside production only', () => {
    const dev = loadConfig({});
    expect(dev.audio).toEqual({ url: null, secret: null, sandboxStepMs: 1500, sandboxCalls: 'voice', recording: true });
    expect(loadConfig({ SANDBOX_CALLS: 'timer', CALL_RECORDING: '0' }).audio).toMatchObject({
      sandboxCalls: 'timer',
      recording: false,
    });
    expect(dev.webhooks).toEqual({ allowPrivate: true, timeoutMs: 10_000, pollIntervalMs: 1000 });
    const prod = loadConfig({ NODE_ENV: 'production' });
    expect(prod.webhooks.allowPrivate).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE: '1' }).webhooks.allowPrivate).toBe(true);
  });

  it('takes a real audio server with its secret', () => {
    const config = loadConfig({
      AUDIO_SERVER_URL: 'https://audio.example.com/',
      AUDIO_SERVER_SECRET: secret,
      WEBHOOK_TIMEOUT_SECONDS: '3',
    });
    expect(config.audio).toMatchObject({ url: 'https://audio.example.com', secret });
    expect(config.webhooks.timeoutMs).toBe(3000);
  });

  it('refuses an audio server without a secret, a malformed secret, a bad URL and a bad flag, all at once', () => {
    try {
      loadConfig({ AUDIO_SERVER_URL: 'ftp://audio', WEBHOOK_ALLOW_PRIVATE: 'maybe' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/AUDIO_SERVER_URL must be a http: or https: URL/);
      expect(problems).toMatch(/AUDIO_SERVER_SECRET is required with AUDIO_SERVER_URL/);
      expect(problems).toMatch(/WEBHOOK_ALLOW_PRIVATE must be/);
    }
    expect(() =>
      loadConfig({ AUDIO_SERVER_URL: 'https://audio.example.com', AUDIO_SERVER_SECRET: 'not-a-secret' }),
    ).toThrow(/AUDIO_SERVER_SECRET must be whsec_/);
  });
});
