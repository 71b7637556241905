// The README is the front door and the guides the rooms: every variable the
// server reads is in docs/configuration.md, every link points at a file (and
// heading) in the repository, the README maps every guide, and the
// walkthroughs paste safely. test/guides.test.ts runs the walkthroughs.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { CONFIG_SECTIONS } from '../src/config/sections.js';
import { BASE_LINE, GUIDES, blocksOf, guidePath, walkthroughSection } from './support/guides.js';

const root = resolve('.');
const read = (file: string) => readFileSync(file, 'utf8');
const guideFiles = readdirSync('docs/guides')
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/guides/${f}`);
const documents = ['README.md', 'docs/operations.md', 'docs/configuration.md', 'docs/development.md', ...guideFiles];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
const anchorsOf = (markdown: string) =>
  new Set([...markdown.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1])));

describe('the README', () => {
  const readme = read('README.md');

  it('shows the two commands, the first call and how long npm test takes', () => {
    expect(readme).toContain('npm install\nnpm start');
    expect(readme).toContain('npx tsx sdk/examples/sandbox-call.ts');
    expect(readme).toContain('/console/calls');
    expect(readme).toMatch(/npm test\s+# every test file: about \d+(\.\d+)? minutes on 2 cores/);
    expect(readme).toContain('](docs/console-call.png)');
    expect(readme.split('\n').length).toBeLessThan(300);
  });

  it('maps every guide whose walkthrough runs, and the API reference, the SDK and the benchmarks', () => {
    for (const guide of GUIDES) expect(readme, guide).toContain(`](${guidePath(guide)})`);
    for (const target of ['openapi.json', 'sdk/README.md', 'BENCHMARKS.md', 'bench/ANALYSIS.md', 'docs/operations.md'])
      expect(readme, target).toContain(`](${target})`);
  });
});

describe('the docs', () => {
  it('docs/configuration.md documents every environment variable the configuration declares, and it reads no other', () => {
    const reference = read('docs/configuration.md');
    const declared = CONFIG_SECTIONS.flatMap((section) => section.variables.map((v) => v.name));
    expect(declared.length).toBeGreaterThan(100);
    expect(declared.filter((v) => !reference.includes(`\`${v}\``))).toEqual([]);
    // Every name loadConfig looks up, with every optional provider switched on, is declared (a pattern such as
    // OIDC_<SLUG>_ISSUER stands for the names made from it); a variable read without a declaration fails here.
    const names = declared.map((name) => new RegExp(`^${name.replace(/<[A-Z]+>/g, '[A-Z0-9_]+')}$`));
    const looked = new Set<string>();
    const env: Record<string, string> = {
      TWILIO_ACCOUNT_SID: 'AC1',
      TWILIO_AUTH_TOKEN: 'token',
      TWILIO_FROM: '+14155550100',
      SMTP_URL: 'smtp://127.0.0.1:2525',
      OIDC_PROVIDERS: 'corp',
      OIDC_CORP_ISSUER: 'http://127.0.0.1:9/',
      OIDC_CORP_CLIENT_ID: 'id',
      OIDC_CORP_CLIENT_SECRET: 'secret',
      STRIPE_SECRET_KEY: 'sk_test_1',
      STRIPE_WEBHOOK_SECRET: 'whsec_1',
      ELEVENLABS_API_KEY: 'key',
      EMBEDDINGS_URL: 'http://127.0.0.1:9/v1',
      CONNECTOR_URL: 'http://127.0.0.1:9',
      AUDIO_SERVER_URL: 'http://127.0.0.1:9',
      DEEPGRAM_API_KEY: 'key',
      STT_URL: 'http://127.0.0.1:9/v1',
      LLM_URL: 'http://127.0.0.1:9/v1',
    };
    const watched = new Proxy(env, {
      get: (target, key) => {
        if (typeof key === 'string') looked.add(key);
        return target[key as string];
      },
    });
    try {
      loadConfig(watched, root);
    } catch {
      // Problems do not matter here, only which names were looked up.
    }
    expect(looked.size).toBeGreaterThan(100);
    expect([...looked].filter((name) => !names.some((re) => re.test(name)))).toEqual([]);
  });

  it('docs/operations.md covers running it: health, resetting data, CORS, rate limits, the master key, instances, metrics', () => {
    const operations = read('docs/operations.md');
    for (const topic of [
      '/api/health',
      'rm -rf ./data',
      '## CORS',
      '## Rate limits',
      '## The master key and backups',
      'back it up',
      '## Running several instances',
      '### Metrics',
    ])
      expect(operations).toContain(topic);
  });

  it.each(documents)('%s links only to files and headings in the repository', (file) => {
    const text = read(file).replace(/^```[\s\S]*?^```$/gm, '');
    const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    for (const target of targets) {
      expect(target, `${file}: ${target}`).not.toMatch(/^[a-z][a-z0-9+.-]*:/i);
      const [path, hash] = target.split('#');
      const resolved = path ? resolve(dirname(file), path) : resolve(file);
      expect(relative(root, resolved).startsWith('..'), `${file}: ${target} leaves the repository`).toBe(false);
      expect(existsSync(resolved), `${file}: ${target}`).toBe(true);
      if (hash && resolved.endsWith('.md'))
        expect(anchorsOf(read(resolved)).has(hash), `${file}: ${target}: no such heading`).toBe(true);
    }
  });
});

describe('the walkthroughs, as pasted', () => {
  const sections = GUIDES.map((guide) => ({ guide, section: walkthroughSection(read(guidePath(guide)), guide) }));
  const commands = (section: string) =>
    blocksOf(section)
      .filter((b) => b.lang === 'sh')
      .flatMap((b) => b.body.split('\n'))
      .map((line) => line.replace(/(^|\s)#.*$/, ''));

  it('every guide in the list exists and has a walkthrough with shell commands', () => {
    for (const { guide, section } of sections) expect(commands(section).join('').trim(), guide).not.toBe('');
    for (const file of guideFiles) expect(existsSync(file)).toBe(true);
    expect(existsSync(join('docs/guides', 'accounts.md'))).toBe(true);
  });

  it('take the server address from one variable: BASE, set once at the start', () => {
    const all = sections.flatMap(({ guide, section }) => commands(section).map((line) => ({ guide, line })));
    expect(all.filter(({ line }) => BASE_LINE.test(line)).map(({ guide }) => guide)).toEqual(['accounts']);
    expect(BASE_LINE.test(commands(sections[0].section)[0])).toBe(true);
    // A guide that also stands alone may say BASE=${BASE:-http://127.0.0.1:3000}: after the others it keeps their BASE.
    const standAlone = /^BASE=\$\{BASE:-http:\/\/127\.0\.0\.1:3000\}\s*$/;
    expect(
      all.filter(({ line }) => line.includes('127.0.0.1:3000') && !BASE_LINE.test(line) && !standAlone.test(line)),
    ).toEqual([]);
  });

  it('paste safely: no <placeholder> the shell would read as a redirect, no eight-minute benchmark', () => {
    const lines = sections.flatMap(({ section }) => commands(section));
    expect(lines.length).toBeGreaterThan(50);
    expect(lines.filter((line) => /<[A-Za-z][\w-]*>/.test(line))).toEqual([]);
    expect(lines.filter((line) => /npm run bench(?!\s+--\s+--quick)/.test(line))).toEqual([]);
  });

  it('every example script they run takes BASE_URL', () => {
    const scripts = [
      'sdk/examples/quickstart.ts',
      'sdk/examples/sandbox-call.ts',
      'sdk/examples/persona-preview.ts',
      'scripts/console-demo.mjs',
    ];
    for (const script of scripts) expect(read(script), script).toContain('process.env.BASE_URL');
    const files = sections.flatMap(({ section }) => blocksOf(section).filter((b) => b.file && b.lang === 'ts'));
    for (const file of files) expect(file.body, file.file).toContain('process.env.BASE_URL');
  });
});
