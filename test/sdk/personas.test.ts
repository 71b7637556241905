// The SDK's persona helpers against a listening server: signPreviewRequest
// (plain and nested), play, decryptPersonaAudio; and the example, run as a
// newcomer would, writes a WAV that decodes to audible speech.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceApiError, decryptPersonaAudio, signPreviewRequest } from '../../sdk/src/index.js';
import { parseWav } from '../support/wav.js';
import { type ListeningApp, runNpx, startServer, verifiedClient } from './support.js';

let server: ListeningApp;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('SDK persona helpers', () => {
  it('signs a preview request, plays it and decrypts an audible WAV, plain and nested in a JWE', async () => {
    const { client } = await verifiedClient(server);
    const registered = await client.servers.register({ name: 'sdk-preview', mode: 'generate' });
    for (const encryptTo of [undefined, await client.servers.current()]) {
      const jwt = await signPreviewRequest({
        privateKey: registered.privateKey!,
        text: 'Hello from the SDK.',
        encryptTo,
      });
      expect(jwt.split('.')).toHaveLength(encryptTo ? 5 : 3);
      const answer = await client.personas.play('local-noah', { server: registered.name, jwt });
      const audio = await decryptPersonaAudio(answer, registered.privateKey!);
      expect(audio.contentType).toBe('audio/wav');
      const wav = parseWav(audio.bytes);
      expect(wav.durationSeconds).toBeGreaterThan(0.5);
      expect(wav.rms).toBeGreaterThan(500);
    }
  });

  it('a replayed request is refused with invalid_token; another key cannot open the audio', async () => {
    const { client } = await verifiedClient(server);
    const a = await client.servers.register({ name: 'sdk-a', mode: 'generate' });
    const b = await client.servers.register({ name: 'sdk-b', mode: 'generate' });
    const jwt = await signPreviewRequest({ privateKey: a.privateKey!, text: 'Once.' });
    const answer = await client.personas.play('local-amy', { server: a.name, jwt });
    const replay = await client.personas.play('local-amy', { server: a.name, jwt }).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(WorkspaceApiError);
    expect(replay).toMatchObject({ status: 400, code: 'invalid_token' });
    await expect(decryptPersonaAudio(answer, b.privateKey!)).rejects.toThrow();
  });

  it('refuses a lifetime over ten minutes before signing', async () => {
    await expect(signPreviewRequest({ privateKey: 'x', expiresIn: 3600 })).rejects.toThrow(RangeError);
  });
});

it('sdk/examples/persona-preview.ts writes a playable WAV of audible speech', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'persona-example-'));
  try {
    const out = join(dir, 'preview.wav');
    const { code, stdout, stderr } = await runNpx(['tsx', 'sdk/examples/persona-preview.ts'], {
      BASE_URL: server.baseUrl,
      OUT: out,
    });
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^1\. signed up and verified \+1555\d{7}$/);
    expect(lines[2]).toBe('3. signed a preview request for Amy (local voice en-us+f3)');
    expect(lines[3]).toMatch(
      new RegExp(`^4\\. wrote ${out.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: audio/wav, \\d+ bytes$`),
    );
    expect(lines.at(-1)).toBe('done');
    const wav = parseWav(readFileSync(out));
    expect(wav).toMatchObject({ format: 1, channels: 1, bitsPerSample: 16, sampleRate: 22050 });
    expect(wav.durationSeconds).toBeGreaterThan(2);
    expect(wav.rms).toBeGreaterThan(500);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
