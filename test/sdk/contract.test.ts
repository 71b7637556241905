// The SDK cannot drift from the API: its generated types match the committed
// openapi.json, it type-checks as browser code (no Node APIs), and its built
// JavaScript loads without a TypeScript loader.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const tsc = join(process.cwd(), 'node_modules', '.bin', 'tsc');

describe('SDK contract', () => {
  it('sdk/src/openapi-types.ts is what openapi-typescript generates from openapi.json', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'sdk/scripts/openapi-types.ts', '--check'], {
      encoding: 'utf8',
    });
    expect(result.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(result.status).toBe(0);
  });

  it('sdk/src type-checks with browser libraries only and imports nothing from node:', () => {
    const result = spawnSync(tsc, ['-p', 'sdk/tsconfig.json'], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
    for (const file of [
      'client.ts',
      'crypto.ts',
      'encoding.ts',
      'events.ts',
      'http.ts',
      'sse.ts',
      'store.ts',
      'data.ts',
      'auth.ts',
      'events-api.ts',
    ]) {
      expect(readFileSync(join('sdk/src', file), 'utf8')).not.toMatch(
        /from ['"]node:|require\(|\bBuffer\b|\bprocess\./,
      );
    }
  });

  it('builds to ES modules that load in plain Node', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sdk-build-'));
    try {
      const result = spawnSync(tsc, ['-p', 'sdk/tsconfig.build.json', '--outDir', out], { encoding: 'utf8' });
      expect(result.stdout + result.stderr).toBe('');
      const sdk = await import(pathToFileURL(join(out, 'index.js')).href);
      const payload = await sdk.encrypt('00'.repeat(32), 'built');
      expect(await sdk.decryptText('00'.repeat(32), sdk.payloadToStored(payload))).toBe('built');
      expect(typeof sdk.WorkspaceClient).toBe('function');
      expect(readFileSync(join(out, 'index.d.ts'), 'utf8')).toContain('WorkspaceClient');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
