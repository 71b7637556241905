// Knowledge retrieval: quality and speed, through the real server's routes.
//
// Corpus: the README files of the npm packages installed in node_modules (text
// the project did not write), read now and never committed. Questions:
// bench/knowledge/questions.json, each naming the package whose README answers
// it. Quality is recall@5 and MRR@5 of that README among the 5 matches, next to
// MiniSearch (a plain BM25 library) over the same files in the same run.
// Speed: search p50/p99 at 20 concurrent searches over a base of at least
// 10,000 chunks, and ingestion throughput (upload to searchable) in MB/s.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { chunkText, normalizeText } from '../../src/modules/knowledge/text.js';
import { ROOT } from './proc.js';

export interface QualityFigures {
  recallAt5: number;
  mrrAt5: number;
}

export interface KnowledgeResults {
  backend: string;
  corpus: { documents: number; bytes: number };
  questions: number;
  service: QualityFigures;
  minisearch: QualityFigures;
  /** Questions whose document the service did not return in its 5 matches. */
  misses: string[];
  ingestion: { bytes: number; seconds: number; mbPerSecond: number; chunks: number };
  search: {
    chunks: number;
    concurrency: number;
    seconds: number;
    requests: number;
    rps: number;
    p50: number;
    p99: number;
    errors: number;
    firstSearchMs?: number;
  };
}

interface CorpusFile {
  pkg: string;
  name: string;
  text: string;
}

interface Question {
  question: string;
  document: string;
}

/** Every installed package's README (top-level and scoped packages). */
export function loadCorpus(): CorpusFile[] {
  const modules = join(ROOT, 'node_modules');
  const packages: string[] = [];
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@')) for (const sub of readdirSync(join(modules, entry))) packages.push(`${entry}/${sub}`);
    else packages.push(entry);
  }
  const files: CorpusFile[] = [];
  for (const pkg of packages.sort()) {
    let names: string[];
    try {
      names = readdirSync(join(modules, pkg));
    } catch {
      continue;
    }
    const readme = names.find((n) => /^readme(\.md|\.markdown)?$/i.test(n));
    if (!readme) continue;
    const path = join(modules, pkg, readme);
    if (!statSync(path).isFile() || statSync(path).size < 200) continue;
    files.push({ pkg, name: `${pkg.replace('/', '+')}.md`, text: readFileSync(path, 'utf8') });
  }
  return files;
}

const pkgOfName = (name: string) =>
  name
    .replace(/ \(\d+\/\d+\)$/, '')
    .replace(/^copy\d+-/, '')
    .replace(/\.md$/, '')
    .replace('+', '/');

async function call(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** Uploads files 25 per request; returns the seconds it took. */
async function uploadAll(
  base: string,
  key: string,
  baseId: string,
  files: Array<{ name: string; text: string }>,
): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < files.length; i += 25) {
    const form = new FormData();
    for (const f of files.slice(i, i + 25)) form.append('files', new Blob([f.text], { type: 'text/markdown' }), f.name);
    const res = await fetch(`${base}/api/knowledge-bases/${baseId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    await res.arrayBuffer();
  }
  return (performance.now() - t0) / 1000;
}

function score(ranked: string[][], questions: Question[]): QualityFigures & { misses: string[] } {
  let hits = 0;
  let rr = 0;
  const misses: string[] = [];
  questions.forEach((q, i) => {
    const rank = ranked[i].slice(0, 5).indexOf(q.document);
    if (rank >= 0) {
      hits += 1;
      rr += 1 / (rank + 1);
    } else misses.push(`${q.document}: ${q.question}`);
  });
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return { recallAt5: round(hits / questions.length), mrrAt5: round(rr / questions.length), misses };
}

/** The same files in MiniSearch (BM25+, its defaults; file name boosted like the service's title weight). */
function miniSearchRankings(corpus: CorpusFile[], questions: Question[]): string[][] {
  const index = new MiniSearch<{ id: number; name: string; text: string; pkg: string }>({
    fields: ['name', 'text'],
    storeFields: ['pkg'],
    searchOptions: { boost: { name: 2 } },
  });
  index.addAll(corpus.map((f, id) => ({ id, name: f.name, text: f.text, pkg: f.pkg })));
  return questions.map((q) =>
    index
      .search(q.question)
      .slice(0, 5)
      .map((r) => r.pkg as string),
  );
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] * 10) / 10;
}

export async function runKnowledgeBench(options: {
  backend: string;
  base: string;
  apiKey: string;
  seconds: number;
  minChunks?: number;
  concurrency?: number;
}): Promise<KnowledgeResults> {
  const { base, apiKey: key } = options;
  const minChunks = options.minChunks ?? 10_000;
  const concurrency = options.concurrency ?? 20;
  const corpus = loadCorpus();
  const available = new Set(corpus.map((f) => f.pkg));
  const questions = (
    JSON.parse(readFileSync(join(ROOT, 'bench', 'knowledge', 'questions.json'), 'utf8')) as Question[]
  ).filter((q) => available.has(q.document));
  const corpusBytes = corpus.reduce((n, f) => n + Buffer.byteLength(f.text), 0);

  // Quality: one base holding the corpus once.
  const quality = (await call(base, key, 'PUT', '/api/knowledge-bases', { name: 'bench quality' })).id as string;
  await uploadAll(base, key, quality, corpus);
  const rankings: string[][] = [];
  for (const q of questions) {
    const matches = (await call(base, key, 'POST', `/api/knowledge-bases/${quality}/search`, {
      text: q.question,
    })) as Array<{ document: { name: string } }>;
    rankings.push(matches.map((m) => pkgOfName(m.document.name)));
  }
  const service = score(rankings, questions);
  const mini = score(miniSearchRankings(corpus, questions), questions);

  // Speed: copies of the corpus until the base holds at least minChunks chunks (counted as the server cuts them).
  const chunksPerCopy = corpus.reduce((n, f) => n + chunkText(normalizeText(f.text)).length, 0);
  const copies = Math.max(1, Math.ceil(minChunks / chunksPerCopy));
  const files = Array.from({ length: copies }, (_, c) =>
    corpus.map((f) => ({ name: `copy${c + 1}-${f.name}`, text: f.text })),
  ).flat();
  const big = (await call(base, key, 'PUT', '/api/knowledge-bases', { name: 'bench load' })).id as string;
  const seconds = await uploadAll(base, key, big, files);
  const bytes = corpusBytes * copies;

  // The first search after the upload builds the base's in-memory index (over a second for 10,000 chunks): timed on
  // its own, so the measured window is the steady state and its seconds are all spent searching.
  const firstStart = performance.now();
  await call(base, key, 'POST', `/api/knowledge-bases/${big}/search`, { text: questions[0].question });
  const firstSearchMs = Math.round(performance.now() - firstStart);

  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const deadline = performance.now() + options.seconds * 1000;
  const warmupEnd = performance.now() + 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const q = questions[next++ % questions.length].question;
      const t0 = performance.now();
      try {
        const res = await fetch(`${base}/api/knowledge-bases/${big}/search`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: q }),
        });
        await res.arrayBuffer();
        if (res.status !== 200) errors += 1;
      } catch {
        errors += 1;
      }
      if (t0 >= warmupEnd) latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  latencies.sort((a, b) => a - b);
  const measured = options.seconds - 1;

  return {
    backend: options.backend,
    corpus: { documents: corpus.length, bytes: corpusBytes },
    questions: questions.length,
    service: { recallAt5: service.recallAt5, mrrAt5: service.mrrAt5 },
    minisearch: { recallAt5: mini.recallAt5, mrrAt5: mini.mrrAt5 },
    misses: service.misses,
    ingestion: {
      bytes,
      seconds: Math.round(seconds * 100) / 100,
      mbPerSecond: Math.round((bytes / 1e6 / seconds) * 100) / 100,
      chunks: chunksPerCopy * copies,
    },
    search: {
      chunks: chunksPerCopy * copies,
      concurrency,
      seconds: measured,
      requests: latencies.length,
      rps: Math.round(latencies.length / measured),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      errors,
      firstSearchMs,
    },
  };
}
