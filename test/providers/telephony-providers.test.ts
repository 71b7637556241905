// Which telephony providers a configuration gets, and the sandbox's own rules.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createProviders, sandboxTwilioToken } from '../../src/providers/index.js';
import type { Outbox } from '../../src/providers/outbox.js';
import { SANDBOX_INVENTORY, SandboxTelephonyProvider } from '../../src/providers/telephony/sandbox.js';

const outbox = { add: async () => 'id' } as unknown as Outbox;
const twilioEnv = { TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 'tok', TWILIO_FROM: '+15005550006' };
const key = randomBytes(32);
const slugs = (env: Record<string, string>) =>
  createProviders(loadConfig({ DATA_DIR: '/tmp/x', ...env }), outbox, key).telephony.list.map((p) => p.slug);

describe('telephony providers', () => {
  it('sandbox alone; twilio next to it in development; twilio alone in production', () => {
    expect(slugs({})).toEqual(['sandbox']);
    expect(slugs(twilioEnv)).toEqual(['twilio', 'sandbox']);
    expect(
      slugs({ ...twilioEnv, NODE_ENV: 'production', MASTER_KEY: key.toString('base64'), JWT_SECRET: 'x'.repeat(32) }),
    ).toEqual(['twilio']);
    const providers = createProviders(loadConfig({ DATA_DIR: '/tmp/x', ...twilioEnv }), outbox, key);
    expect(providers.telephony.get('twilio')!.callbackSigningToken).toBe('tok');
    expect(providers.telephony.get('sandbox')!.callbackSigningToken).toBe(sandboxTwilioToken(key));
    expect(sandboxTwilioToken(key)).not.toBe(sandboxTwilioToken(randomBytes(32)));
  });

  it('the sandbox sells only well-formed numbers of its inventory', async () => {
    const sandbox = new SandboxTelephonyProvider(outbox, 'token');
    for (const [country, ranges] of Object.entries(SANDBOX_INVENTORY)) {
      for (const type of Object.keys(ranges) as Array<'local' | 'mobile' | 'tollFree'>) {
        const found = await sandbox.searchNumbers({ country, type, limit: 50 });
        expect(found.length).toBeGreaterThan(0);
        expect(new Set(found.map((n) => n.phoneNumber)).size).toBe(found.length);
        for (const n of found) expect(n.phoneNumber).toMatch(/^\+[1-9]\d{9,13}$/);
      }
    }
    expect((await sandbox.buyNumber({ phoneNumber: '+14155550100' })).sid).toMatch(/^PN[0-9a-f]{32}$/);
    await expect(sandbox.buyNumber({ phoneNumber: '+14155551234' })).rejects.toMatchObject({ code: 'conflict' });
    expect(await sandbox.searchNumbers({ country: 'US', type: 'local', limit: 5, contains: '3125550' })).toSatisfy(
      (list: Array<{ phoneNumber: string }>) => list.every((n) => n.phoneNumber.includes('3125550')),
    );
    sandbox.stop();
  });
});
