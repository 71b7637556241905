// POST /api/pathways/validate, and resolving the pathway a call names (inline,
// `{ id }` of the owner's conversational-pathways store, the old steps list),
// on a real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/http/errors.js';
import { examplePathway } from '../../../src/modules/pathways/examples.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, registerUser } from '../../support/factories.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  // General authentication: a user whose phone is not verified may check pathways.
  user = await registerUser(t);
});
afterAll(() => t.close());

const validate = (payload: unknown, headers: Record<string, string> = bearer(user.token)) =>
  t.app.inject({
    method: 'POST',
    url: '/api/pathways/validate',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  });

/** The AppError a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('POST /api/pathways/validate', () => {
  it('answers 200 valid with the warnings of a valid pathway', async () => {
    const res = await validate(examplePathway);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ valid: true, warnings: [] });
    const warned = await validate({
      ...examplePathway,
      global: [{ to: 'person', when: 'The caller asks for a person' }],
    });
    expect(warned.statusCode).toBe(200);
    expect(warned.json()).toEqual({
      valid: true,
      warnings: [
        {
          path: '/global/0/keywords',
          message: 'a `when` edge without keywords: the sandbox dialogue engine cannot take it',
        },
      ],
    });
  });

  it('answers 422 invalid_pathway with every error and its path, wrong types included', async () => {
    const res = await validate({
      ...examplePathway,
      name: 42,
      nodes: [...examplePathway.nodes, { id: 'greet', type: 'end' }],
      edges: [...examplePathway.edges, { from: 'person', to: 'confirm' }],
    });
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(body).toEqual({
      code: 'invalid_pathway',
      message: expect.stringMatching(/^the pathway is not valid: 3 errors; the first: \/name must be string$/),
      errors: expect.any(Array),
    });
    expect(body.errors).toEqual([
      { path: '/name', message: 'must be string' },
      { path: '/nodes/4/id', message: 'duplicate id "greet" (first at /nodes/0)' },
      { path: '/edges/3/to', message: 'no node has id "confirm"' },
    ]);
  });

  it('checks inline tools as the custom tools will declare them (parameters that compile)', async () => {
    const tool = {
      type: 'http',
      name: 'lookup',
      description: 'Look an order up',
      parameters: { type: 'object', properties: { id: { type: 'text' } } },
      url: 'https://example.com/lookup',
    };
    const res = await validate({
      ...examplePathway,
      nodes: [{ ...examplePathway.nodes[0], tools: [tool] }, ...examplePathway.nodes.slice(1)],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([
      { path: '/nodes/0/tools/0/parameters', message: expect.stringMatching(/^does not compile/) },
    ]);
  });

  it('takes any JSON object (what is wrong is the answer), but not another JSON value', async () => {
    const empty = await validate({});
    expect(empty.statusCode).toBe(422);
    expect(empty.json().errors.map((e: { path: string }) => e.path)).toEqual(['/name', '/start', '/nodes', '/edges']);
    const list = await validate([examplePathway]);
    expect(list.statusCode).toBe(400);
    expect(list.json()).toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('must be a JSON object'),
    });
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const res = await validate({ ...examplePathway, description: 'x'.repeat(1024 * 1024) });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });

  it('needs credentials (401)', async () => {
    const res = await validate(examplePathway, {});
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('unauthenticated');
    expect((await validate(examplePathway, bearer('wsk_not-a-key'))).statusCode).toBe(401);
  });
});

describe('resolvePathway', () => {
  const pathways = () => t.services.pathways.pathways;
  const store = async (owner: TestUser, document: unknown) =>
    (
      await t.services.data.records.create(
        owner.id,
        'conversational-pathways',
        Buffer.from(typeof document === 'string' ? document : JSON.stringify(document)),
      )
    ).id;

  it('takes an inline document as it is, with its warnings', async () => {
    const resolved = await pathways().resolvePathway(user.id, examplePathway);
    expect(resolved).toEqual({ id: null, document: examplePathway, warnings: [] });
    const withWarning = await pathways().resolvePathway(user.id, {
      ...examplePathway,
      edges: [...examplePathway.edges, { from: 'greet', to: 'person', when: 'The caller is angry' }],
    });
    expect(withWarning.warnings).toEqual([{ path: '/edges/3/keywords', message: expect.stringContaining('sandbox') }]);
  });

  it('refuses an invalid inline document with invalid_pathway (422) and every error', async () => {
    const err = await failure(pathways().resolvePathway(user.id, { ...examplePathway, start: 'hello' }));
    expect([err.code, err.status]).toEqual(['invalid_pathway', 422]);
    expect(err.extra).toEqual({ errors: [{ path: '/start', message: 'no node has id "hello"' }] });
    expect((await failure(pathways().resolvePathway(user.id, 'greet'))).code).toBe('invalid_pathway');
  });

  it("reads { id } from the owner's conversational-pathways store, decrypted", async () => {
    const id = await store(user, examplePathway);
    // Encrypted at rest: the stored content is not the document's JSON.
    const row = await t.database.db
      .selectFrom('objects')
      .select('content')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(row.content).toString('utf8')).not.toContain('Order status');
    expect(await pathways().resolvePathway(user.id, { id })).toEqual({ id, document: examplePathway, warnings: [] });
  });

  it("answers 404 for another user's pathway id, an id of another store, or none", async () => {
    const other = await registerUser(t);
    const theirs = await store(other, examplePathway);
    const mine = await failure(pathways().resolvePathway(user.id, { id: theirs }));
    expect([mine.code, mine.status]).toEqual(['not_found', 404]);
    // The owner reads it.
    expect((await pathways().resolvePathway(other.id, { id: theirs })).id).toBe(theirs);
    const agent = (await t.services.data.records.create(user.id, 'agents', Buffer.from(JSON.stringify(examplePathway))))
      .id;
    expect((await failure(pathways().resolvePathway(user.id, { id: agent }))).status).toBe(404);
    expect(
      (await failure(pathways().resolvePathway(user.id, { id: '01890a5d-ac96-774b-bcce-b302099a8057' }))).status,
    ).toBe(404);
  });

  it('refuses a stored pathway that is not valid, or not JSON, with invalid_pathway', async () => {
    const invalid = await store(user, { ...examplePathway, nodes: examplePathway.nodes.slice(1) });
    const err = await failure(pathways().resolvePathway(user.id, { id: invalid }));
    expect(err.code).toBe('invalid_pathway');
    expect(err.extra?.errors).toEqual(expect.arrayContaining([{ path: '/start', message: 'no node has id "greet"' }]));
    const garbled = await store(user, 'not { json');
    expect((await failure(pathways().resolvePathway(user.id, { id: garbled }))).extra).toEqual({
      errors: [{ path: '', message: 'the stored pathway is not JSON' }],
    });
    expect((await failure(pathways().resolvePathway(user.id, { id: 7 }))).extra).toEqual({
      errors: [{ path: '/id', message: expect.stringContaining('conversational-pathways') }],
    });
  });

  it('turns the old { name?, steps } into a linear pathway of conversation nodes ending in an end node', async () => {
    const resolved = await pathways().resolvePathway(user.id, {
      name: 'Intake',
      steps: ['Ask for their name', 'Ask what they need'],
    });
    expect(resolved).toEqual({
      id: null,
      warnings: [],
      document: {
        name: 'Intake',
        start: 'step-1',
        nodes: [
          { id: 'step-1', type: 'conversation', prompt: 'Ask for their name' },
          { id: 'step-2', type: 'conversation', prompt: 'Ask what they need' },
          { id: 'end', type: 'end' },
        ],
        edges: [
          { from: 'step-1', to: 'step-2' },
          { from: 'step-2', to: 'end' },
        ],
      },
    });
    expect((await pathways().resolvePathway(user.id, { steps: ['Help'] })).document.name).toBe('Pathway');
  });

  it('refuses an old steps list that is empty or names what no call knows, at the step', async () => {
    const empty = await failure(pathways().resolvePathway(user.id, { steps: [] }));
    expect(empty.extra).toEqual({ errors: [{ path: '/steps', message: expect.stringContaining('fewer than 1') }] });
    const templated = await failure(
      pathways().resolvePathway(user.id, { steps: ['Greet {{contact.name}}', 'Ask about {{order}}'] }),
    );
    expect(templated.extra).toEqual({ errors: [{ path: '/steps/1', message: expect.stringContaining('{{order}}') }] });
  });
});
