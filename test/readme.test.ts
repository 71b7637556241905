// The README's configuration table is for newcomers: every variable the server
// reads must be in it.
import { readFileSync } from 'node:fs';
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
});
