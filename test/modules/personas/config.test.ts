// The variables of personas and integrations: ElevenLabs when its key is set,
// Calendly's real API in production or when CALENDLY_API_BASE is set.
import { describe, expect, it } from 'vitest';
import { type ConfigError, loadConfig } from '../../../src/config.js';
import { createProviders } from '../../../src/providers/index.js';
import type { Outbox } from '../../../src/providers/outbox.js';

describe('voice and scheduling configuration', () => {
  it('uses local speech and the Calendly sandbox by default', async () => {
    const config = loadConfig({}, '/srv');
    expect(config.elevenlabs).toBeNull();
    expect(config.calendly).toBeNull();
    const providers = createProviders(config, {} as Outbox);
    expect(providers.voice).toMatchObject({
      sandbox: false,
      external: null,
      name: expect.stringContaining('espeak-ng (local, WebAssembly)'),
    });
    expect(providers.scheduling).toMatchObject({ name: 'calendly sandbox', sandbox: true });
    await providers.voice.local.close?.();
  });

  it('turns on ElevenLabs with a key and the real Calendly API with a base URL or in production', async () => {
    const config = loadConfig(
      {
        ELEVENLABS_API_KEY: 'xi',
        ELEVENLABS_API_BASE: 'http://127.0.0.1:1234/',
        CALENDLY_API_BASE: 'http://127.0.0.1:5678/',
      },
      '/srv',
    );
    expect(config.elevenlabs).toEqual({ apiKey: 'xi', apiBase: 'http://127.0.0.1:1234' });
    expect(config.calendly).toEqual({ apiBase: 'http://127.0.0.1:5678' });
    const providers = createProviders(config, {} as Outbox);
    expect(providers.voice.external?.name).toBe('elevenlabs');
    expect(providers.scheduling).toMatchObject({ name: 'calendly', sandbox: false });
    await providers.voice.local.close?.();
    const production = loadConfig({ NODE_ENV: 'production', MASTER_KEY: Buffer.alloc(32).toString('base64') }, '/srv');
    expect(production.calendly).toEqual({ apiBase: 'https://api.calendly.com' });
  });

  it('names bad base URLs', () => {
    let problems: string[] = [];
    try {
      loadConfig({ ELEVENLABS_API_BASE: 'ftp://x', CALENDLY_API_BASE: 'nope' }, '/srv');
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems.join('\n')).toMatch(/ELEVENLABS_API_BASE must be a http: or https: URL/);
    expect(problems.join('\n')).toMatch(/CALENDLY_API_BASE must be a http: or https: URL/);
  });
});
