// The README's configuration table is for newcomers: every variable the server
// reads must be in it.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('README', () => {
  it('documents every environment variable src/config.ts reads', () => {
    const config = readFileSync('src/config.ts', 'utf8');
    const readme = readFileSync('README.md', 'utf8');
    const variables = [...config.matchAll(/\b(?:opt|str|int|bool)\('([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]);
    expect(variables.length).toBeGreaterThan(20);
    expect(variables.filter((v) => !readme.includes(`\`${v}\``) && !readme.includes(` ${v}`))).toEqual([]);
  });

  it('shows the two commands', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).toContain('npm install');
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });

  it('links only to files in the repository', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).not.toContain('../');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    expect(targets.length).toBeGreaterThan(2);
    for (const target of targets) {
      if (target.startsWith('#')) continue;
      expect(target, target).not.toMatch(/^[a-z]+:/i);
      expect(existsSync(target.split('#')[0]), target).toBe(true);
    }
  });

  it('covers running it: health, resetting data, CORS, rate limits, the master key', () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const topic of ['/api/health', 'rm -rf ./data', '## CORS', '## Rate limits', '## The master key and backups', 'back it up']) expect(readme).toContain(topic);
  });
});

