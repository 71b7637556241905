// Local speech (Debian's espeak-ng command, or espeak-ng WebAssembly in a
// worker thread): settings are checked before they become arguments, text is
// never parsed as options, and failures, overload and hung jobs are answered
// without losing the engine. Every behaviour runs on both engines.
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { findBinary } from '../../src/providers/speech-to-text/pocketsphinx.js';
import { LocalSpeechProvider } from '../../src/providers/voice/local.js';
import { parseWav } from '../support/wav.js';

const providers: LocalSpeechProvider[] = [];
const command = findBinary('espeak-ng');
afterAll(async () => {
  for (const p of providers) await p.close();
});

async function error(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('LocalSpeechProvider', () => {
  it("uses Debian's espeak-ng when it is installed, else the WebAssembly build", () => {
    expect(new LocalSpeechProvider({ binary: null }).binary).toBeNull();
    expect(new LocalSpeechProvider().binary).toBe(command);
  });

  it('turns settings into espeak-ng arguments and refuses anything else', () => {
    expect(
      LocalSpeechProvider.argumentsFor({ type: 'local', voiceId: 'en-gb-x-rp+m3', speed: 150, pitch: 40 }),
    ).toEqual(['-v', 'en-gb-x-rp+m3', '-s', '150', '-p', '40']);
    for (const voiceId of ['-w', '--stdout', 'en-us -w /tmp/x', '../../etc', '']) {
      expect(() => LocalSpeechProvider.argumentsFor({ type: 'local', voiceId })).toThrow(AppError);
    }
    expect(() => LocalSpeechProvider.argumentsFor({ type: 'local', voiceId: 'en-us', speed: 5000 })).toThrow(/speed/);
    expect(() => LocalSpeechProvider.argumentsFor({ type: 'local', voiceId: 'en-us', pitch: '50' })).toThrow(/pitch/);
  });

  describe.each([
    ['the WebAssembly build', null],
    ["Debian's espeak-ng command", command],
  ] as const)('on %s', (name, binary) => {
    const make = (options?: ConstructorParameters<typeof LocalSpeechProvider>[0]) => {
      const p = new LocalSpeechProvider({ binary, ...options });
      providers.push(p);
      return p;
    };
    if (binary === null && name !== 'the WebAssembly build') {
      it.skip('needs espeak-ng installed (apt-get install espeak-ng)', () => {});
      return;
    }

    it('speaks text that looks like options instead of obeying it', async () => {
      const audio = await make().synthesize('--help -v xx -w /tmp/owned.wav', { type: 'local', voiceId: 'en-us' });
      expect(audio.contentType).toBe('audio/wav');
      expect(parseWav(audio.bytes).rms).toBeGreaterThan(500);
    });

    it('answers an unknown voice with provider_error and keeps working', async () => {
      const speech = make();
      expect(await error(speech.synthesize('hello', { type: 'local', voiceId: 'zz-nowhere' }))).toMatchObject({
        code: 'provider_error',
        message: expect.stringContaining('voice does not exist'),
      });
      expect(
        parseWav((await speech.synthesize('still here', { type: 'local', voiceId: 'en-us' })).bytes).rms,
      ).toBeGreaterThan(500);
    });

    it('refuses a call past its room with 429, and serves every job it accepted', async () => {
      const speech = make({ maxPendingPerCall: 2 });
      const settings = { type: 'local', voiceId: 'en-us' };
      const outcomes = await Promise.all(
        ['one', 'two', 'three'].map((t) =>
          speech.synthesize(t, settings).then(
            () => 'ok',
            (e: AppError) => e.code,
          ),
        ),
      );
      expect(outcomes).toEqual(['ok', 'ok', 'rate_limited']);
    });

    it('speaks a call ahead of previews asked before it, and refuses one account its third preview', async () => {
      const speech = make();
      const settings = { type: 'local', voiceId: 'en-us' };
      const order: string[] = [];
      const ask = (name: string, request: { priority: 'call' | 'preview'; account?: string }) =>
        speech.synthesize(`this is ${name}`, settings, request).then(
          () => order.push(name),
          (e: AppError) => order.push(`${name} ${e.code}`),
        );
      // With one job at a time (the WebAssembly worker, or a single core) the first preview runs and the second waits.
      const jobs = [
        ask('preview a1', { priority: 'preview', account: 'a' }),
        ask('preview a2', { priority: 'preview', account: 'a' }),
        ask('preview a3', { priority: 'preview', account: 'a' }),
        ask('call', { priority: 'call' }),
      ];
      await Promise.all(jobs);
      expect(order[0]).toBe('preview a3 rate_limited');
      expect(order.indexOf('call')).toBeLessThan(order.indexOf('preview a2'));
    });

    it('fails a job that outlives its time limit and starts a fresh worker for the next', async () => {
      const speech = make({ timeoutMs: 1 });
      expect(
        await error(
          speech.synthesize('a sentence long enough to take more than a millisecond', {
            type: 'local',
            voiceId: 'en-us',
          }),
        ),
      ).toMatchObject({ code: 'provider_error', message: expect.stringContaining('longer than') });
      // The same provider, given time again, speaks through a new worker.
      Object.assign(speech, { timeoutMs: 30_000 });
      expect(
        parseWav((await speech.synthesize('recovered', { type: 'local', voiceId: 'en-us' })).bytes).rms,
      ).toBeGreaterThan(500);
    });
  });
});
