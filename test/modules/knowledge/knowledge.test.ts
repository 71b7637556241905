import { AlignmentType, Document, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser, registerUser } from '../../support/factories.js';
import { type FormFile, multipartForm } from '../../support/multipart.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await createVerifiedUser(t);
});
afterAll(() => t.close());

async function createBase(token = user.token, name = 'Support') {
  const res = await t.app.inject({
    method: 'PUT',
    url: '/api/knowledge-bases',
    headers: bearer(token),
    payload: { name, description: 'manuals' },
  });
  expect(res.statusCode).toBe(200);
  return res.json().id as string;
}

const upload = (id: string, files: FormFile[], token = user.token) => {
  const form = multipartForm(files);
  return t.app.inject({
    method: 'POST',
    url: `/api/knowledge-bases/${id}`,
    headers: { ...bearer(token), ...form.headers },
    payload: form.payload,
  });
};
const search = (id: string, text: string, token = user.token) =>
  t.app.inject({ method: 'POST', url: `/api/knowledge-bases/${id}/search`, headers: bearer(token), payload: { text } });
const read = (id: string, token = user.token) =>
  t.app.inject({ method: 'GET', url: `/api/knowledge-bases/${id}`, headers: bearer(token) });

async function makePdf(lines: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([600, 800]);
  lines.forEach((line, i) => page.drawText(line, { x: 40, y: 740 - i * 20, size: 12, font }));
  return Buffer.from(await pdf.save());
}

async function makeDocx(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({
    sections: [
      { children: paragraphs.map((p) => new Paragraph({ alignment: AlignmentType.LEFT, children: [new TextRun(p)] })) },
    ],
  });
  return Packer.toBuffer(doc);
}

describe('knowledge base records', () => {
  it('creates, lists, reads, renames and deletes a base', async () => {
    const created = await t.app.inject({
      method: 'PUT',
      url: '/api/knowledge-bases',
      headers: bearer(user.token),
      payload: { name: 'Docs' },
    });
    expect(created.statusCode).toBe(200);
    const base = created.json();
    expect(base).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Docs',
      description: '',
      metadata: {},
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const list = await t.app.inject({ method: 'GET', url: '/api/knowledge-bases', headers: bearer(user.token) });
    expect(list.json().map((b: { id: string }) => b.id)).toContain(base.id);

    t.clock.advance(1000);
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/api/knowledge-bases/${base.id}`,
      headers: bearer(user.token),
      payload: { description: 'all the docs' },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ name: 'Docs', description: 'all the docs' });
    expect(patched.json().updatedAt).not.toBe(base.updatedAt);

    expect((await read(base.id)).json()).toMatchObject({ id: base.id, description: 'all the docs', documents: [] });
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/api/knowledge-bases/${base.id}`, headers: bearer(user.token) }))
        .statusCode,
    ).toBe(204);
    expect((await read(base.id)).statusCode).toBe(404);
  });

  it('needs a phone-verified user and a name', async () => {
    const unverified = await registerUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/knowledge-bases', headers: bearer(unverified.token) });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('phone_not_verified');
    expect((await t.app.inject({ method: 'GET', url: '/api/knowledge-bases' })).statusCode).toBe(401);
    const empty = await t.app.inject({
      method: 'PUT',
      url: '/api/knowledge-bases',
      headers: bearer(user.token),
      payload: { name: '' },
    });
    expect(empty.statusCode).toBe(400);
  });

  it("answers 404 for another user's base on every route and leaves it unchanged", async () => {
    const id = await createBase();
    expect(
      (await upload(id, [{ filename: 'a.txt', content: 'The quarterly report is due on Friday.' }])).statusCode,
    ).toBe(200);
    const mallory = await createVerifiedUser(t);
    const docId = (await read(id)).json().documents[0].id;
    const attempts = [
      { method: 'GET', url: `/api/knowledge-bases/${id}` },
      { method: 'PATCH', url: `/api/knowledge-bases/${id}`, payload: { name: 'mine' } },
      { method: 'POST', url: `/api/knowledge-bases/${id}/search`, payload: { text: 'quarterly report' } },
      { method: 'POST', url: `/api/knowledge-bases/${id}/links`, payload: { urls: ['http://127.0.0.1:9/'] } },
      { method: 'DELETE', url: `/api/knowledge-bases/${id}/${docId}` },
      { method: 'DELETE', url: `/api/knowledge-bases/${id}` },
    ] as const;
    for (const a of attempts) {
      const res = await t.app.inject({ ...a, headers: bearer(mallory.token) });
      expect(res.statusCode, `${a.method} ${a.url}`).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await upload(id, [{ filename: 'b.txt', content: 'mine now' }], mallory.token)).statusCode).toBe(404);
    const list = await t.app.inject({ method: 'GET', url: '/api/knowledge-bases', headers: bearer(mallory.token) });
    expect(list.json()).toEqual([]);
    const still = (await read(id)).json();
    expect(still.name).toBe('Support');
    expect(still.documents).toHaveLength(1);
    expect((await search(id, 'quarterly report')).json()).toHaveLength(1);
  });
});

describe('uploads', () => {
  it('reads text, Markdown, CSV, JSON, HTML, PDF and DOCX, sniffing the type from the content', async () => {
    const id = await createBase();
    const files: FormFile[] = [
      { filename: 'notes.txt', content: 'Plain notes about the aardvark enclosure.', contentType: 'text/plain' },
      {
        filename: 'guide.md',
        content: '# Guide\n\nThe **bison** paddock opens at nine.',
        contentType: 'text/markdown',
      },
      { filename: 'prices.csv', content: 'animal,price\ncapybara,12\n', contentType: 'text/csv' },
      {
        filename: 'data.json',
        content: JSON.stringify({ animal: 'dugong', food: 'seagrass' }),
        contentType: 'application/json',
      },
      // Claimed as text/plain and named .txt: the content says HTML.
      {
        filename: 'page.txt',
        content:
          '<!doctype html><html><head><title>Echidna facts</title><script>var secret = "zzscript";</script></head><body><nav>Home</nav><article><h1>Echidna facts</h1><p>The echidna is a spiny monotreme that lays eggs and eats ants and termites with its long sticky tongue.</p><p>Echidnas live across Australia and New Guinea.</p></article></body></html>',
        contentType: 'text/plain',
      },
      // Claimed as text/plain: the bytes are a PDF.
      {
        filename: 'manual.bin',
        content: await makePdf(['Flamingo care manual', 'Flamingos eat brine shrimp.']),
        contentType: 'text/plain',
      },
      { filename: 'policy.docx', content: await makeDocx(['Gecko policy', 'Geckos are fed crickets twice a week.']) },
    ];
    const res = await upload(id, files);
    expect(res.statusCode, res.body).toBe(200);
    const docs = res.json();
    expect(docs.map((d: { name: string; mimeType: string; source: string }) => [d.name, d.mimeType, d.source])).toEqual(
      [
        ['notes.txt', 'text/plain', 'upload'],
        ['guide.md', 'text/markdown', 'upload'],
        ['prices.csv', 'text/csv', 'upload'],
        ['data.json', 'application/json', 'upload'],
        ['page.txt', 'text/html', 'upload'],
        ['manual.bin', 'application/pdf', 'upload'],
        ['policy.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'upload'],
      ],
    );
    expect(docs.every((d: { id: unknown; size: number }) => Number.isInteger(d.id) && d.size > 0)).toBe(true);
    expect(docs[5].size).toBe((files[5].content as Buffer).length);

    for (const [question, document, fragment] of [
      ['aardvark', 'notes.txt', 'aardvark enclosure'],
      ['bison paddock', 'guide.md', 'bison'],
      ['capybara price', 'prices.csv', 'capybara,12'],
      ['dugong seagrass', 'data.json', 'dugong'],
      ['echidna tongue', 'page.txt', 'spiny monotreme'],
      ['flamingo shrimp', 'manual.bin', 'brine shrimp'],
      ['gecko crickets', 'policy.docx', 'crickets twice a week'],
    ]) {
      const matches = (await search(id, question)).json();
      expect(matches[0]?.document.name, question).toBe(document);
      expect(matches[0].text).toContain(fragment);
    }
    // HTML is reduced to its readable text: scripts are not indexed.
    expect((await search(id, 'zzscript')).json()).toEqual([]);
    expect((await read(id)).json().documents).toHaveLength(7);
  });

  it('refuses the whole upload when one file cannot be read, naming it, with nothing created', async () => {
    const id = await createBase();
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000a49444154789c63000100000500010d0a2db40000000049454e44ae426082',
      'hex',
    );
    const cases: Array<{ file: FormFile; status: number; code: string }> = [
      {
        file: { filename: 'photo.png', content: png, contentType: 'text/plain' },
        status: 415,
        code: 'unsupported_media_type',
      },
      {
        file: { filename: 'latin1.txt', content: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff]) },
        status: 415,
        code: 'unsupported_media_type',
      },
      { file: { filename: 'broken.json', content: '{"a": ' }, status: 400, code: 'invalid_input' },
      { file: { filename: 'empty.txt', content: '  \n ' }, status: 400, code: 'invalid_input' },
      { file: { filename: 'scan.pdf', content: await makePdf([]) }, status: 400, code: 'invalid_input' },
      {
        file: { filename: 'truncated.pdf', content: (await makePdf(['Some text here'])).subarray(0, 400) },
        status: 400,
        code: 'invalid_input',
      },
    ];
    for (const { file, status, code } of cases) {
      const res = await upload(id, [
        { filename: 'good.txt', content: 'A perfectly good file about otters.' },
        file,
        { filename: 'later.md', content: '# Later' },
      ]);
      expect(res.statusCode, `${file.filename}: ${res.body}`).toBe(status);
      expect(res.json().code).toBe(code);
      expect(res.json().message).toContain(file.filename);
      expect(res.json().file).toBe(file.filename);
    }
    expect((await read(id)).json().documents).toEqual([]);
    expect((await search(id, 'otters')).json()).toEqual([]);
    const chunks = await t.database.db
      .selectFrom('knowledge_chunks')
      .select('id')
      .where('knowledge_base_id', '=', id)
      .execute();
    expect(chunks).toEqual([]);
  });

  it('refuses non-multipart bodies, parts not named files, and an empty upload', async () => {
    const id = await createBase();
    const json = await t.app.inject({
      method: 'POST',
      url: `/api/knowledge-bases/${id}`,
      headers: bearer(user.token),
      payload: { files: [] },
    });
    expect(json.statusCode).toBe(415);
    const wrong = await upload(id, [{ field: 'file', filename: 'a.txt', content: 'hello' }]);
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().message).toContain('"files"');
    const none = multipartForm([], { note: 'no files' });
    const empty = await t.app.inject({
      method: 'POST',
      url: `/api/knowledge-bases/${id}`,
      headers: { ...bearer(user.token), ...none.headers },
      payload: none.payload,
    });
    expect(empty.statusCode).toBe(400);
    expect((await read(id)).json().documents).toEqual([]);
  });

  it('enforces the file count and file size limits with 413, nothing created', async () => {
    const small = await createTestApp({ env: { KNOWLEDGE_MAX_FILES: '2', KNOWLEDGE_MAX_FILE_BYTES: '2048' } });
    try {
      const owner = await createVerifiedUser(small);
      const id = (
        await small.app.inject({
          method: 'PUT',
          url: '/api/knowledge-bases',
          headers: bearer(owner.token),
          payload: { name: 'x' },
        })
      ).json().id;
      const send = (files: FormFile[]) => {
        const form = multipartForm(files);
        return small.app.inject({
          method: 'POST',
          url: `/api/knowledge-bases/${id}`,
          headers: { ...bearer(owner.token), ...form.headers },
          payload: form.payload,
        });
      };
      const many = await send([1, 2, 3].map((i) => ({ filename: `${i}.txt`, content: `file ${i}` })));
      expect(many.statusCode).toBe(413);
      const big = await send([
        { filename: 'ok.txt', content: 'fine' },
        { filename: 'huge.txt', content: 'x '.repeat(2000) },
      ]);
      expect(big.statusCode).toBe(413);
      expect(big.json().message).toContain('huge.txt');
      const docs = (
        await small.app.inject({ method: 'GET', url: `/api/knowledge-bases/${id}`, headers: bearer(owner.token) })
      ).json().documents;
      expect(docs).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('splits text over 200 KB into slices of about 200 KB at paragraph boundaries', async () => {
    const id = await createBase();
    // ~520 KB: 2,000 numbered paragraphs of ~260 bytes.
    const paragraphs = Array.from(
      { length: 2000 },
      (_, i) => `Paragraph ${i} marker${i}x. ${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(4)}`,
    );
    const text = paragraphs.join('\n\n');
    const res = await upload(id, [{ filename: 'big.txt', content: text }]);
    expect(res.statusCode).toBe(200);
    const docs = res.json();
    expect(docs.map((d: { name: string }) => d.name)).toEqual(['big.txt (1/3)', 'big.txt (2/3)', 'big.txt (3/3)']);
    for (const d of docs) expect(d.size).toBeLessThanOrEqual(200 * 1024);
    expect(docs[0].size).toBeGreaterThan(150 * 1024);
    // Every paragraph is whole in exactly one slice: no paragraph was cut.
    const first = (await search(id, 'marker0x')).json();
    expect(first[0].document.name).toBe('big.txt (1/3)');
    const last = (await search(id, 'marker1999x')).json();
    expect(last[0].document.name).toBe('big.txt (3/3)');
    expect(last[0].text).toContain('Paragraph 1999 marker1999x.');
  });
});

describe('search', () => {
  it('ranks the passage that answers the question first', async () => {
    const id = await createBase();
    const manual = [
      'Installation. Unpack the router and place it near a power outlet. Connect the WAN port to your modem with the supplied cable.',
      'Resetting the device. To restore factory settings, hold the reset button on the back for ten seconds until the status light blinks amber.',
      'Wireless security. The router ships with WPA3 enabled. Change the default network password from the admin page under Wireless.',
      'Firmware updates. The router checks for new firmware every night and installs it at 3 am unless automatic updates are disabled.',
      'Warranty. The device is covered for two years against manufacturing defects. Keep your receipt as proof of purchase.',
    ].join('\n\n'.concat('Filler text about unrelated matters. '.repeat(30), '\n\n'));
    await upload(id, [
      { filename: 'router-manual.txt', content: manual },
      {
        filename: 'recipes.txt',
        content: 'Pancakes need flour, eggs and milk. Reset the oven timer after ten minutes. Hold the pan steady.',
      },
    ]);
    const cases: Array<[string, string]> = [
      ['How do I restore the factory settings?', 'hold the reset button'],
      ['how long is the warranty', 'two years'],
      ['when are firmware updates installed', '3 am'],
      ['change wifi network password', 'WPA3'],
    ];
    for (const [question, answer] of cases) {
      const matches = (await search(id, question)).json();
      expect(matches.length).toBeGreaterThan(0);
      expect(matches.length).toBeLessThanOrEqual(5);
      expect(matches[0].text, question).toContain(answer);
      expect(matches[0].document).toMatchObject({
        name: 'router-manual.txt',
        source: 'upload',
        id: expect.any(Number),
      });
      expect(matches[0].score).toBe(1);
      for (let i = 1; i < matches.length; i += 1) expect(matches[i].score).toBeLessThanOrEqual(matches[i - 1].score);
    }
  });

  it('returns at most 5 matches and nothing for words no document holds', async () => {
    const id = await createBase();
    await upload(id, [
      {
        filename: 'many.txt',
        content: Array.from(
          { length: 30 },
          (_, i) => `Section ${i}: the llama eats hay. ${'Padding words. '.repeat(80)}`,
        ).join('\n\n'),
      },
    ]);
    expect((await search(id, 'llama hay')).json()).toHaveLength(5);
    expect((await search(id, 'xylophone')).json()).toEqual([]);
    expect((await search(id, '"*) OR NEAR( -')).statusCode).toBe(200);
  });
});

describe('search scope and rarity', () => {
  it("never returns another base's chunks, even when they match better", async () => {
    const mine = await createBase();
    const sibling = await createBase(user.token, 'Other');
    const stranger = await createVerifiedUser(t);
    const theirs = await createBase(stranger.token, 'Theirs');
    await upload(mine, [
      {
        filename: 'weak.txt',
        content: 'A note that mentions the capybara once, among many other words about gardening and soil.',
      },
    ]);
    const strong = [
      {
        filename: 'strong.txt',
        content:
          'Capybara capybara: the capybara is the largest rodent. Capybara herds graze by rivers; capybara pups swim.',
      },
    ];
    await upload(sibling, strong);
    await upload(theirs, strong, stranger.token);
    const matches = (await search(mine, 'capybara largest rodent herds')).json();
    expect(matches.map((m: { document: { name: string } }) => m.document.name)).toEqual(['weak.txt']);
    expect((await search(sibling, 'capybara largest rodent herds')).json()[0].document.name).toBe('strong.txt');
  });

  it('weights terms by how rare they are in the base now, after uploads and deletions', async () => {
    const id = await createBase();
    await upload(id, [
      { filename: 'quokka.txt', content: 'The quokka smiles. A quokka lives on an island; every quokka is small.' },
      { filename: 'wombat.txt', content: 'The wombat digs burrows under the bush and sleeps through the day.' },
    ]);
    const first = () => search(id, 'quokka wombat').then((r) => r.json()[0].document.name as string);
    // Equally rare: the passage saying "quokka" three times wins.
    expect(await first()).toBe('quokka.txt');
    const common = (
      await upload(
        id,
        Array.from({ length: 20 }, (_, i) => ({
          filename: `q${i}.txt`,
          content: `Note ${i}: a quokka was seen near the jetty.`,
        })),
      )
    ).json();
    // "quokka" is now in almost every document: the one rare word decides.
    expect(await first()).toBe('wombat.txt');
    for (const doc of common)
      expect(
        (
          await t.app.inject({
            method: 'DELETE',
            url: `/api/knowledge-bases/${id}/${doc.id}`,
            headers: bearer(user.token),
          })
        ).statusCode,
      ).toBe(204);
    expect(await first()).toBe('quokka.txt');
  });
});

describe('deletion', () => {
  it('deleting a document removes its index entries; the others stay searchable', async () => {
    const id = await createBase();
    const docs = (
      await upload(id, [
        { filename: 'keep.txt', content: 'The walrus sleeps on ice floes.' },
        { filename: 'drop.txt', content: 'The narwhal has a long tusk.' },
      ])
    ).json();
    const drop = docs[1].id;
    expect((await search(id, 'narwhal tusk')).json()[0].document.id).toBe(drop);
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/api/knowledge-bases/${id}/${drop}`,
      headers: bearer(user.token),
    });
    expect(res.statusCode).toBe(204);
    expect((await search(id, 'narwhal tusk')).json()).toEqual([]);
    expect((await search(id, 'walrus')).json()).toHaveLength(1);
    expect(
      await t.database.db.selectFrom('knowledge_chunks').select('id').where('document_id', '=', drop).execute(),
    ).toEqual([]);
    expect((await read(id)).json().documents.map((d: { id: number }) => d.id)).toEqual([docs[0].id]);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/api/knowledge-bases/${id}/${drop}`, headers: bearer(user.token) }))
        .statusCode,
    ).toBe(404);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/api/knowledge-bases/${id}/abc`, headers: bearer(user.token) }))
        .statusCode,
    ).toBe(400);
  });

  it('deleting a base removes its chunks and full-text entries', async () => {
    const id = await createBase();
    const other = await createBase();
    await upload(id, [{ filename: 'a.txt', content: 'The pangolin is covered in scales.' }]);
    await upload(other, [{ filename: 'b.txt', content: 'The pangolin also appears here.' }]);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/api/knowledge-bases/${id}`, headers: bearer(user.token) }))
        .statusCode,
    ).toBe(204);
    expect(
      await t.database.db.selectFrom('knowledge_chunks').select('id').where('knowledge_base_id', '=', id).execute(),
    ).toEqual([]);
    expect(
      await t.database.db.selectFrom('knowledge_documents').select('id').where('knowledge_base_id', '=', id).execute(),
    ).toEqual([]);
    if (t.database.dialect === 'sqlite') {
      // The FTS index holds only the other base's chunk.
      const { sql } = await import('kysely');
      const hits = await sql<{
        rowid: number;
      }>`select rowid from knowledge_chunks_fts where knowledge_chunks_fts match 'pangolin'`.execute(t.database.db);
      expect(hits.rows).toHaveLength(1);
    }
    expect((await search(other, 'pangolin')).json()).toHaveLength(1);
  });
});
