// /console/pathways in headless Chromium (DESIGN.md "Conversational
// pathways", Console): the account's encrypted `conversational-pathways`
// records listed and opened in the browser, one drawn as an SVG graph laid out
// by the vendored dagre (nodes by type, edge conditions, the start, global
// edges), the validate route's errors and warnings on the nodes and edges they
// name, a pasted document checked and drawn; then a call page drawing the path
// its call took (visited nodes, taken edges, the steps, the variables, each
// transcript line's node). Every page is checked for CSP violations; the
// screenshots are looked at by a person (UPDATE_SCREENSHOTS=1 writes the
// guide's into docs/).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWav } from '../../../src/lib/audio.js';
import { examplePathway } from '../../../src/modules/pathways/examples.js';
import type { TestApp } from '../../support/app.js';
import { type Browser, chromium } from '../../support/chromium.js';
import { type TestUser, createVerifiedUser } from '../../support/factories.js';
import { consoleBrowser, cspViolations, listeningApp, onPhoneScreen, screenshotDir, signIn } from './page-support.js';
import { WallClock, seedCall } from './support.js';

/** A pathway with every node type, an `if` branch, a keypad edge, a `when` edge and a global edge. */
const frontDesk = {
  name: 'Front desk',
  description: 'Books, looks up or routes a caller.',
  start: 'greet',
  variables: {
    wants: { type: 'enum', values: ['book', 'status'], description: 'What the caller wants' },
    order_status: { type: 'string' },
  },
  nodes: [
    { id: 'greet', type: 'conversation', say: 'Hello, press 1 to book, or tell me your order.', extract: ['wants'] },
    {
      id: 'lookup',
      type: 'webhook',
      url: 'http://127.0.0.1:9/orders',
      method: 'POST',
      assign: { order_status: '$.status' },
    },
    { id: 'menu', type: 'digits', send: '1w2' },
    { id: 'confirm', type: 'sms', text: 'Your order is {{order_status}}.' },
    { id: 'person', type: 'transfer', say: 'Let me put you through.' },
    { id: 'bye', type: 'end', say: 'Goodbye!' },
  ],
  edges: [
    { from: 'greet', to: 'menu', keywords: ['1'] },
    { from: 'greet', to: 'lookup', when: 'The caller asks about an order', keywords: ['order'] },
    { from: 'lookup', to: 'confirm', if: { var: 'order_status', op: 'exists' } },
    { from: 'lookup', to: 'person' },
    { from: 'menu', to: 'bye' },
    { from: 'confirm', to: 'bye' },
  ],
  global: [{ to: 'person', when: 'The caller asks for a person', keywords: ['person', 'human'] }],
};

/** Wrong in three ways and doubtful in one: an edge to no node, an undeclared `{{template}}`, a node nothing reaches; a `when` edge without keywords. */
const broken = {
  name: 'Broken',
  start: 'greet',
  nodes: [
    { id: 'greet', type: 'conversation', say: 'Hi {{first_name}}' },
    { id: 'bye', type: 'end' },
    { id: 'island', type: 'end', say: 'Nobody comes here.' },
  ],
  edges: [
    { from: 'greet', to: 'bye', when: 'The caller is done' },
    { from: 'greet', to: 'nowhere' },
  ],
};

async function storePathway(t: TestApp, user: TestUser, document: unknown): Promise<string> {
  return (
    await t.services.data.records.create(
      user.id,
      'conversational-pathways',
      Buffer.from(JSON.stringify(document), 'utf8'),
    )
  ).id;
}

interface DrawnNode {
  id: string;
  type: string;
  start: boolean;
  visited: boolean;
  issue: string | null;
  title: string;
  text: string;
  box: { x: number; y: number; width: number; height: number };
}

const READ_GRAPH = `
  const svg = document.querySelector('[data-testid=pathway-graph]');
  const nodes = [...svg.querySelectorAll('[data-node-id]')].map((g) => {
    const box = g.getBBox();
    return {
      id: g.dataset.nodeId, type: g.dataset.nodeType, start: g.dataset.start === 'true', visited: g.dataset.visited === 'true',
      issue: g.dataset.issue ?? null, title: g.querySelector('title').textContent,
      text: [...g.querySelectorAll('text')].map((t) => t.textContent).join(' '),
      box: { x: box.x, y: box.y, width: box.width, height: box.height },
    };
  });
  const edges = [...svg.querySelectorAll('[data-edge]')].map((g) => ({
    ref: g.dataset.edge, taken: g.dataset.taken === 'true', issue: g.dataset.issue ?? null,
    label: [...g.querySelectorAll('text')].map((t) => t.textContent).join(' '),
    global: g.classList.contains('global'),
  }));
  return { nodes, edges, globalBox: Boolean(svg.querySelector('[data-global=true]')), width: svg.width.baseVal.value };
`;

describe.runIf(chromium)('the pathways page and a call path in Chromium', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let user: TestUser;
  let dir: string;
  let deskId: string;
  let brokenId: string;
  let exampleId: string;
  /** The call of the path test, for the phone screen test. */
  let pathwayCall = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsapi-console-pathways-'));
    t = await listeningApp();
    origin = t.config.publicUrl;
    user = await createVerifiedUser(t);
    deskId = await storePathway(t, user, frontDesk);
    brokenId = await storePathway(t, user, broken);
    exampleId = await storePathway(t, user, examplePathway);
    browser = await consoleBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists the stored pathways and draws the first: every node by type, the start, edge conditions and the global edge', async () => {
    await signIn(browser, `${origin}/console/pathways`, user);
    const rows = await browser.evaluate<Array<{ id: string; cells: string[] }>>(`
      return [...document.querySelectorAll('[data-testid=pathway-list] [data-testid=pathway-row]')].map((row) => ({ id: row.dataset.pathwayId, cells: [...row.cells].map((c) => c.textContent) }));
    `);
    expect(rows.map((r) => r.id)).toEqual([deskId, brokenId, exampleId]);
    expect(rows.map((r) => r.cells.slice(0, 3))).toEqual([
      ['Front desk', '6', '6'],
      ['Broken', '3', '2'],
      ['Order status', '4', '3'],
    ]);
    expect(
      await browser.evaluate<string>("return document.querySelector('[data-testid=pathway-name]').textContent;"),
    ).toBe('Front desk');
    expect(
      await browser.evaluate<string>("return document.querySelector('[data-testid=pathway-validity]').dataset.valid;"),
    ).toBe('true');

    const graph = await browser.evaluate<{
      nodes: DrawnNode[];
      edges: Array<{ ref: string; label: string; global: boolean; issue: string | null }>;
      globalBox: boolean;
    }>(READ_GRAPH);
    expect(graph.nodes.map((n) => [n.id, n.type])).toEqual([
      ['greet', 'conversation'],
      ['lookup', 'webhook'],
      ['menu', 'digits'],
      ['confirm', 'sms'],
      ['person', 'transfer'],
      ['bye', 'end'],
    ]);
    expect(graph.nodes.filter((n) => n.start).map((n) => n.id)).toEqual(['greet']);
    const byId = Object.fromEntries(graph.nodes.map((n) => [n.id, n]));
    expect(byId.greet!.text).toContain('Conversation');
    expect(byId.greet!.text).toContain('collects wants');
    expect(byId.lookup!.text).toContain('POST http://127.0.0.1:9/orders');
    expect(byId.menu!.text).toContain('sends 1w2');
    expect(byId.confirm!.text).toContain('texts "Your order is {{order_status}}."');
    // Laid out top to bottom, no two nodes overlapping.
    expect(byId.greet!.box.y).toBeLessThan(byId.lookup!.box.y);
    expect(byId.lookup!.box.y).toBeLessThan(byId.confirm!.box.y);
    expect(byId.confirm!.box.y).toBeLessThan(byId.bye!.box.y);
    for (const a of graph.nodes)
      for (const b of graph.nodes) {
        if (a.id >= b.id) continue;
        const apart =
          a.box.x + a.box.width <= b.box.x ||
          b.box.x + b.box.width <= a.box.x ||
          a.box.y + a.box.height <= b.box.y ||
          b.box.y + b.box.height <= a.box.y;
        expect(apart, `${a.id} and ${b.id} overlap`).toBe(true);
      }
    const labels = Object.fromEntries(graph.edges.map((e) => [e.ref, e.label]));
    expect(labels['/edges/0']).toBe('"1"');
    expect(labels['/edges/1']).toBe('The caller asks about an order "order"');
    expect(labels['/edges/2']).toBe('if order_status is set');
    expect(labels['/edges/3']).toBe('otherwise');
    expect(labels['/edges/4']).toBe('');
    expect(graph.edges.filter((e) => e.global).map((e) => [e.ref, e.label])).toEqual([
      ['/global/0', 'The caller asks for a person "person" / "human"'],
    ]);
    expect(graph.globalBox).toBe(true);
    expect(
      await browser.evaluate<string>("return document.querySelector('[data-testid=pathway-graph]').dataset.layout;"),
    ).toBe('page');
    expect(await browser.evaluate<boolean>("return document.getElementById('pathway-issues-section').hidden;")).toBe(
      true,
    );
    await browser.evaluate('window.scrollTo(0, 0);');
    await browser.screenshot(join(screenshotDir(dir), 'console-pathway.png'), 1100, 1300);
    expect(await cspViolations(browser)).toEqual([]);
  }, 60_000);

  it("shows an invalid pathway's errors and warnings on the nodes and edges they name", async () => {
    await browser.open(
      `${origin}/console/pathways?id=${brokenId}`,
      "document.getElementById('content').dataset.ready === 'true'",
    );
    const validity = await browser.evaluate<{ valid: string; text: string }>(`
      const p = document.querySelector('[data-testid=pathway-validity]');
      return { valid: p.dataset.valid, text: p.textContent };
    `);
    expect(validity.valid).toBe('false');
    expect(validity.text).toMatch(/^Not valid: \d+ errors?\./);
    const issues = await browser.evaluate<
      Array<{ level: string; path: string; node: string | null; edge: string | null; text: string }>
    >(`
      return [...document.querySelectorAll('[data-testid=pathway-issues] li')].map((li) => ({
        level: li.dataset.level, path: li.dataset.path, node: li.dataset.node ?? null, edge: li.dataset.edge ?? null, text: li.textContent,
      }));
    `);
    // The route's own answer, every item shown with what it marks.
    const answer = await t.app.inject({
      method: 'POST',
      url: '/api/pathways/validate',
      headers: { authorization: `Bearer ${user.token}` },
      payload: broken,
    });
    expect(answer.statusCode).toBe(422);
    const errors = answer.json().errors as Array<{ path: string; message: string }>;
    expect(issues.filter((i) => i.level === 'error').map((i) => i.path)).toEqual(errors.map((e) => e.path));
    for (const [i, error] of errors.entries()) expect(issues[i]!.text).toContain(error.message);
    expect(issues.find((i) => i.path.startsWith('/nodes/0/say'))?.node).toBe('greet');
    expect(issues.find((i) => i.path.startsWith('/nodes/2'))?.node).toBe('island');
    expect(issues.find((i) => i.path.startsWith('/edges/1'))?.edge).toBe('/edges/1');

    const graph = await browser.evaluate<{ nodes: DrawnNode[]; edges: Array<{ ref: string }> }>(READ_GRAPH);
    const marked = Object.fromEntries(graph.nodes.map((n) => [n.id, n.issue]));
    expect(marked).toEqual({ greet: 'error', bye: null, island: 'error' });
    expect(graph.nodes.find((n) => n.id === 'greet')!.title).toContain('first_name');
    // The edge to no node cannot be drawn; it is in the list.
    expect(graph.edges.map((e) => e.ref)).toEqual(['start', '/edges/0']);
    await browser.evaluate('window.scrollTo(0, 0);');
    await browser.screenshot(join(screenshotDir(dir), 'console-pathway-errors.png'), 1100, 1100);
    expect(await cspViolations(browser)).toEqual([]);
  }, 60_000);

  it('checks and draws a pasted document without storing it; a warning marks its edge', async () => {
    const doubtful = {
      name: 'Pasted',
      start: 'ask',
      nodes: [
        { id: 'ask', type: 'conversation', prompt: 'Ask if they want a callback.' },
        { id: 'bye', type: 'end' },
      ],
      edges: [{ from: 'ask', to: 'bye', when: 'They said no' }],
    };
    await browser.evaluate(`
      document.querySelector('[data-testid=pathway-json]').value = ${JSON.stringify(JSON.stringify(doubtful))};
      document.querySelector('[data-testid=pathway-check]').click();
    `);
    await browser.waitFor(
      "document.querySelector('[data-testid=pathway-name]').textContent === 'Pasted' && document.querySelector('[data-testid=pathway-validity]')?.dataset.valid === 'true'",
      15_000,
      'the pasted pathway drawn',
    );
    const shown = await browser.evaluate<{ text: string; edgeIssue: string | null; items: string[] }>(`
      return {
        text: document.querySelector('[data-testid=pathway-validity]').textContent,
        edgeIssue: document.querySelector('[data-edge="/edges/0"]').dataset.issue ?? null,
        items: [...document.querySelectorAll('[data-testid=pathway-issues] li')].map((li) => li.dataset.level + ' ' + li.dataset.path),
      };
    `);
    expect(shown.text).toBe('Valid, with 1 warning.');
    expect(shown.edgeIssue).toBe('warning');
    expect(shown.items).toEqual(['warning /edges/0/keywords']);
    expect(await cspViolations(browser)).toEqual([]);
    // Nothing was stored.
    await browser.open(`${origin}/console/pathways`, "document.getElementById('content').dataset.ready === 'true'");
    expect(
      await browser.evaluate<number>("return document.querySelectorAll('[data-testid=pathway-row]').length;"),
    ).toBe(3);
  }, 60_000);

  it('saves a valid document to the store (encrypted in the browser), refuses an invalid one, and edits a stored one with If-Match', async () => {
    await browser.open(
      `${origin}/console/pathways?id=${exampleId}`,
      "document.getElementById('content').dataset.ready === 'true'",
    );
    const rows = () =>
      browser.evaluate<number>("return document.querySelectorAll('[data-testid=pathway-row]').length;");
    const before = await rows();
    // The page before a save is marked, so a wait for the page after it cannot pass on the old one.
    const submit = (document: unknown) =>
      browser.evaluate(`
        window.__beforeSave = true;
        document.querySelector('[data-testid=pathway-json]').value = ${JSON.stringify(JSON.stringify(document))};
        document.querySelector('[data-testid=pathway-save]').click();
      `);
    const savedPage =
      "!window.__beforeSave && new URLSearchParams(location.search).get('saved') === '1' && document.getElementById('content').dataset.ready === 'true'";
    const stored = async (id: string) =>
      JSON.parse((await t.services.data.records.read(user.id, 'conversational-pathways', id)).toString('utf8'));

    // Invalid: drawn with its errors, not saved.
    await submit(broken);
    await browser.waitFor(
      "document.getElementById('check-error').textContent.startsWith('Not saved')",
      15_000,
      'the refusal',
    );
    expect(
      await browser.evaluate<string>("return document.querySelector('[data-testid=pathway-validity]').dataset.valid;"),
    ).toBe('false');
    expect(await rows()).toBe(before);

    // Valid: saved as a new record, then shown by its id; the server opens it with the store's key, as a call does.
    const fresh = { ...examplePathway, name: 'Made in the console' };
    await submit(fresh);
    await browser.waitFor(savedPage, 15_000, 'the saved pathway');
    const savedId = await browser.evaluate<string>("return new URLSearchParams(location.search).get('id');");
    expect(savedId).not.toBe(exampleId);
    expect(await rows()).toBe(before + 1);
    expect(
      await browser.evaluate<boolean>("return !document.querySelector('[data-testid=pathway-saved]').hidden;"),
    ).toBe(true);
    expect(await stored(savedId)).toEqual(fresh);

    // Edit it: the form holds its JSON; saving replaces it in place.
    await browser.evaluate("document.querySelector('[data-testid=pathway-edit]').click();");
    const held = await browser.evaluate<{ json: string; editing: string }>(`
      return { json: document.querySelector('[data-testid=pathway-json]').value, editing: document.querySelector('[data-testid=pathway-editing]').textContent };
    `);
    expect(JSON.parse(held.json)).toEqual(fresh);
    expect(held.editing).toContain(savedId);
    await submit({ ...fresh, name: 'Renamed' });
    await browser.waitFor(savedPage, 15_000, 'the edited pathway');
    expect(
      await browser.evaluate<string>("return document.querySelector('[data-testid=pathway-name]').textContent;"),
    ).toBe('Renamed');
    expect(await browser.evaluate<string>("return new URLSearchParams(location.search).get('id');")).toBe(savedId);
    expect(await rows()).toBe(before + 1);
    expect((await stored(savedId)).name).toBe('Renamed');

    // Changed elsewhere after the form was opened: saving over it is refused (412); the other change stays.
    await browser.evaluate("document.querySelector('[data-testid=pathway-edit]').click();");
    const root = (
      await t.app.inject({ method: 'GET', url: '/api/root', headers: { authorization: `Bearer ${user.token}` } })
    ).json();
    const elsewhere = await t.app.inject({
      method: 'PATCH',
      url: `/api/objects/${savedId}`,
      headers: { authorization: `Bearer ${user.token}` },
      payload: {
        keyId: root.stores['conversational-pathways'].keyId,
        content: Buffer.from('changed elsewhere').toString('base64'),
        authTag: Buffer.alloc(16).toString('base64'),
        iv: Buffer.alloc(12).toString('base64'),
      },
    });
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    await submit({ ...fresh, name: 'Lost update' });
    await browser.waitFor(
      "document.getElementById('check-error').textContent.includes('changed elsewhere since you opened it')",
      15_000,
      'the 412',
    );
    const raw = await t.app.inject({
      method: 'GET',
      url: `/api/objects/${savedId}`,
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(Buffer.from(raw.json().content, 'hex').toString('utf8')).toBe('changed elsewhere');
    expect(await cspViolations(browser)).toEqual([]);
  }, 60_000);

  it("draws the path a call took on its stored pathway: visited nodes, taken edges, the steps, the variables, each line's node", async () => {
    const callId = await seedCall(t, user, {
      direction: 'web',
      durationSeconds: 9,
      transcript: [
        {
          role: 'agent',
          text: 'Hello, press 1 to book, or tell me your order.',
          startMs: 100,
          endMs: 2500,
          node: 'greet',
        },
        { role: 'caller', text: 'It is about my order.', startMs: 3000, endMs: 4000, node: 'greet' },
        { role: 'agent', text: 'Goodbye!', startMs: 4600, endMs: 5200, node: 'bye' },
      ],
      pathway: {
        id: deskId,
        name: 'Front desk',
        path: [
          { node: 'greet', atMs: 0 },
          { node: 'lookup', atMs: 4100, edge: '/edges/1' },
          { node: 'confirm', atMs: 4300, edge: '/edges/2' },
          { node: 'bye', atMs: 4400, edge: '/edges/5' },
        ],
        variables: { wants: 'status', order_status: 'shipped' },
      },
    });
    pathwayCall = callId;
    await browser.open(
      `${origin}/console/calls/${callId}`,
      "document.getElementById('content').dataset.ready === 'true'",
    );
    const page = await browser.evaluate<{
      hidden: boolean;
      drawnFrom: string;
      nodes: Array<{ id: string; visited: boolean }>;
      taken: string[];
      steps: string[];
      variables: Record<string, string>;
      lineNodes: Array<string | null>;
    }>(`
      const svg = document.querySelector('#pathway-section [data-testid=pathway-graph]');
      return {
        hidden: document.getElementById('pathway-section').hidden,
        drawnFrom: document.getElementById('pathway-drawing').dataset.drawnFrom,
        nodes: [...svg.querySelectorAll('[data-node-id]')].map((g) => ({ id: g.dataset.nodeId, visited: g.dataset.visited === 'true' })),
        taken: [...svg.querySelectorAll('[data-edge][data-taken=true]')].map((g) => g.dataset.edge),
        steps: [...document.querySelectorAll('[data-testid=pathway-path] li')].map((li) => li.textContent),
        variables: Object.fromEntries([...document.querySelectorAll('[data-testid=call-variables] dd')].map((dd) => [dd.dataset.variable, dd.textContent])),
        lineNodes: [...document.querySelector('[data-testid=transcript]').children].map((li) => li.querySelector('.node-tag')?.dataset.node ?? null),
      };
    `);
    expect(page.hidden).toBe(false);
    expect(page.drawnFrom).toBe('store');
    expect(page.nodes.filter((n) => n.visited).map((n) => n.id)).toEqual(['greet', 'lookup', 'confirm', 'bye']);
    expect(page.nodes.filter((n) => !n.visited).map((n) => n.id)).toEqual(['menu', 'person']);
    expect(page.taken.sort()).toEqual(['/edges/1', '/edges/2', '/edges/5', 'start']);
    expect(page.steps).toEqual([
      '0:00 greet',
      '0:04 lookupby /edges/1: The caller asks about an order; "order"',
      '0:04 confirmby /edges/2: if order_status is set',
      '0:04 byeby /edges/5',
    ]);
    expect(page.variables).toEqual({ wants: 'status', order_status: 'shipped' });
    expect(page.lineNodes).toEqual(['greet', 'greet', 'bye']);
    await browser.evaluate("document.getElementById('pathway-section').scrollIntoView();");
    await browser.screenshot(join(screenshotDir(dir), 'console-call-path.png'), 1100, 1000);
    expect(await cspViolations(browser)).toEqual([]);
  }, 60_000);

  it("draws an inline pathway's path on the document its record carries; without one (or with its stored pathway gone) as the chain of the nodes visited", async () => {
    const path = [
      { node: 'ask', atMs: 0 },
      { node: 'ask', atMs: 3000, edge: '/edges/0' },
      { node: 'done', atMs: 6000, edge: '/edges/1' },
    ];
    for (const pathway of [
      { name: 'Inline', path, variables: {} },
      { id: '01a00000-0000-7000-8000-000000000000', name: 'Gone', path, variables: {} },
    ]) {
      const callId = await seedCall(t, user, {
        direction: 'web',
        transcript: [{ role: 'agent', text: 'Hi', startMs: 0, endMs: 500, node: 'ask' }],
        pathway,
      });
      await browser.open(
        `${origin}/console/calls/${callId}`,
        "document.getElementById('content').dataset.ready === 'true'",
      );
      const page = await browser.evaluate<{
        drawnFrom: string;
        nodes: string[];
        visited: string[];
        about: string;
        steps: number;
      }>(`
        const svg = document.querySelector('#pathway-section [data-testid=pathway-graph]');
        return {
          drawnFrom: document.getElementById('pathway-drawing').dataset.drawnFrom,
          nodes: [...svg.querySelectorAll('[data-node-id]')].map((g) => g.dataset.nodeId),
          visited: [...svg.querySelectorAll('[data-node-id][data-visited=true]')].map((g) => g.dataset.nodeId),
          about: document.getElementById('pathway-about').textContent,
          steps: document.querySelectorAll('[data-testid=pathway-path] li').length,
        };
      `);
      expect(page.drawnFrom, pathway.name).toBe('path');
      expect(page.nodes).toEqual(['ask', 'done']);
      expect(page.visited).toEqual(['ask', 'done']);
      expect(page.steps).toBe(3);
      expect(page.about).toContain(
        pathway.name === 'Inline' ? 'An inline pathway' : 'could not be read from the store',
      );
    }
    // A stored pathway edited since the call (its /edges/0 no longer leads where the call went): the chain, said so.
    const edited = await seedCall(t, user, {
      direction: 'web',
      transcript: [{ role: 'agent', text: 'Hi', startMs: 0, endMs: 500, node: 'greet' }],
      pathway: {
        id: deskId,
        name: 'Front desk',
        path: [
          { node: 'greet', atMs: 0 },
          { node: 'lookup', atMs: 2000, edge: '/edges/0' },
        ],
        variables: {},
      },
    });
    await browser.open(
      `${origin}/console/calls/${edited}`,
      "document.getElementById('content').dataset.ready === 'true'",
    );
    expect(
      await browser.evaluate<{ drawnFrom: string; about: string }>(`
        return { drawnFrom: document.getElementById('pathway-drawing').dataset.drawnFrom, about: document.getElementById('pathway-about').textContent };
      `),
    ).toEqual({ drawnFrom: 'path', about: expect.stringContaining('The pathway has changed since this call') });

    // An inline pathway's record carries its document: the path is drawn on it.
    const inline = await seedCall(t, user, {
      direction: 'web',
      transcript: [{ role: 'agent', text: 'Hi', startMs: 0, endMs: 500, node: 'greet' }],
      pathway: {
        name: 'Front desk',
        document: frontDesk,
        path: [
          { node: 'greet', atMs: 0 },
          { node: 'person', atMs: 2000, edge: '/global/0' },
        ],
        variables: {},
      },
    });
    await browser.open(
      `${origin}/console/calls/${inline}`,
      "document.getElementById('content').dataset.ready === 'true'",
    );
    const drawn = await browser.evaluate<{ drawnFrom: string; nodes: number; visited: string[]; taken: string[] }>(`
      const svg = document.querySelector('#pathway-section [data-testid=pathway-graph]');
      return {
        drawnFrom: document.getElementById('pathway-drawing').dataset.drawnFrom,
        nodes: svg.querySelectorAll('[data-node-id]').length,
        visited: [...svg.querySelectorAll('[data-node-id][data-visited=true]')].map((g) => g.dataset.nodeId),
        taken: [...svg.querySelectorAll('[data-edge][data-taken=true]')].map((g) => g.dataset.edge).sort(),
      };
    `);
    expect(drawn).toEqual({
      drawnFrom: 'record',
      nodes: 6,
      visited: ['greet', 'person'],
      taken: ['/global/0', 'start'],
    });

    // A call that walked no pathway shows no path section.
    const plain = await seedCall(t, user, {
      direction: 'web',
      transcript: [{ role: 'agent', text: 'Hi', startMs: 0, endMs: 500 }],
    });
    await browser.open(
      `${origin}/console/calls/${plain}`,
      "document.getElementById('content').dataset.ready === 'true'",
    );
    expect(await browser.evaluate<boolean>("return document.getElementById('pathway-section').hidden;")).toBe(true);
    expect(await cspViolations(browser)).toEqual([]);
  }, 60_000);

  it('lays a large pathway out in a worker (the page stays responsive) under the same CSP and Trusted Types', async () => {
    const size = 120;
    const large = {
      name: 'Large',
      start: 'n0',
      nodes: Array.from({ length: size }, (_, i) => ({
        id: `n${i}`,
        type: i === size - 1 ? 'end' : 'conversation',
        say: `Step ${i}.`,
      })),
      edges: Array.from({ length: size - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
    };
    await browser.open(`${origin}/console/pathways`, "document.getElementById('content').dataset.ready === 'true'");
    await browser.evaluate(`
      document.querySelector('[data-testid=pathway-json]').value = ${JSON.stringify(JSON.stringify(large))};
      document.querySelector('[data-testid=pathway-check]').click();
    `);
    await browser.waitFor(
      "document.querySelector('[data-testid=pathway-name]').textContent === 'Large' && document.getElementById('pathway-view').dataset.state === 'drawn'",
      30_000,
      'the large pathway drawn',
    );
    const drawn = await browser.evaluate<{ layout: string; nodes: number; edges: number; ordered: boolean }>(`
      const svg = document.querySelector('[data-testid=pathway-graph]');
      const ys = [...svg.querySelectorAll('[data-node-id]')].map((g) => g.getBBox().y);
      return {
        layout: svg.dataset.layout,
        nodes: svg.querySelectorAll('[data-node-id]').length,
        edges: svg.querySelectorAll('[data-edge]').length,
        ordered: ys.every((y, i) => i === 0 || y > ys[i - 1]),
      };
    `);
    expect(drawn).toEqual({ layout: 'worker', nodes: size, edges: size, ordered: true });
    expect(await cspViolations(browser)).toEqual([]);
  }, 60_000);

  it('fits a phone screen: the graph scrolls inside its frame, the page is never wider than 375 px', async () => {
    await onPhoneScreen(browser, async () => {
      // The call page of a pathway call too: its graph scrolls in its frame.
      for (const path of ['/console/pathways', `/console/calls/${pathwayCall}`]) {
        await browser.open(`${origin}${path}`, "document.getElementById('content').dataset.ready === 'true'");
        expect(
          await browser.evaluate<number>('return document.documentElement.scrollWidth;'),
          path,
        ).toBeLessThanOrEqual(375);
        expect(
          await browser.evaluate<number>(
            "return document.querySelector('[data-testid=pathway-graph]').width.baseVal.value;",
          ),
          path,
        ).toBeGreaterThan(375);
      }
    });
  }, 60_000);
});

describe.runIf(chromium)('talking to a pathway from the console in Chromium, with a silent fake microphone', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsapi-console-pathway-call-'));
    const silence = join(dir, 'silence.wav');
    writeFileSync(silence, encodeWav(new Int16Array(16_000 * 40), 16_000, 1));
    t = await listeningApp({ clock: new WallClock() });
    origin = t.config.publicUrl;
    browser = await consoleBrowser([
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${silence}%noloop`,
      '--autoplay-policy=no-user-gesture-required',
    ]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('picks the pathway from its page, greets with its start, takes the keypad edge on a key pressed and ends; the call page shows the path', async () => {
    const user = await createVerifiedUser(t);
    const keypad = {
      name: 'Keypad',
      start: 'menu',
      nodes: [
        { id: 'menu', type: 'conversation', say: 'Press 1 for our opening hours.' },
        { id: 'hours', type: 'end', say: 'We are open nine to five. Goodbye!' },
      ],
      edges: [{ from: 'menu', to: 'hours', keywords: ['1'] }],
    };
    const pathwayId = await storePathway(t, user, keypad);
    await signIn(browser, `${origin}/console/pathways?id=${pathwayId}`, user);
    // "Talk to it" opens the call form with the pathway picked.
    await browser.evaluate("document.querySelector('[data-testid=pathway-try]').click();");
    await browser.waitFor(
      "location.pathname === '/console' && document.getElementById('content').dataset.ready === 'true'",
      15_000,
      'the call form',
    );
    expect(await browser.evaluate<string>("return document.querySelector('[data-testid=pathway-select]').value;")).toBe(
      pathwayId,
    );
    await browser.evaluate(
      `const s = document.querySelector('[data-testid=agent-select]'); s.value = ''; s.dispatchEvent(new Event('change'));
       document.querySelector('[data-testid=call]').click();`,
      { userGesture: true },
    );
    await browser.waitFor(
      "[...document.querySelectorAll('[data-testid=transcript] [data-role=agent]')].some((li) => /Press 1/.test(li.textContent) && li.dataset.final === 'true')",
      60_000,
      "the pathway's greeting, heard",
    );
    // The live path: the call_node events mark the start as the node the call is at.
    await browser.waitFor(
      "document.querySelector('#live-path [data-node-id=menu]')?.dataset.current === 'true'",
      30_000,
      'the start marked live',
    );
    expect(
      await browser.evaluate<string>("return document.querySelector('[data-testid=live-node]').textContent;"),
    ).toBe('At menu.');
    // A key pressed during the call goes out as DTMF: the keypad edge.
    await browser.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', { key: '1' }));");
    await browser.waitFor(
      "[...document.querySelectorAll('[data-testid=transcript] [data-role=agent]')].some((li) => /nine to five/.test(li.textContent))",
      60_000,
      "the end node's line",
    );
    await browser.waitFor(
      "document.getElementById('call-status').dataset.state === 'ended'",
      60_000,
      'the end node hanging up',
    );
    const live = await browser.evaluate<{ visited: string[]; current: string[]; at: string }>(`
      return {
        visited: [...document.querySelectorAll('#live-path [data-node-id][data-visited=true]')].map((g) => g.dataset.nodeId),
        current: [...document.querySelectorAll('#live-path [data-current=true]')].map((g) => g.dataset.nodeId),
        at: document.querySelector('[data-testid=live-node]').textContent,
      };
    `);
    expect(live).toEqual({ visited: ['menu', 'hours'], current: [], at: 'Ended at hours.' });

    const sessionId = await browser.evaluate<string>(
      "return document.getElementById('call-status').dataset.sessionId;",
    );
    await browser.open(
      `${origin}/console/calls/${sessionId}`,
      "document.getElementById('content').dataset.ready === 'true' && !document.getElementById('pathway-section').hidden",
    );
    const page = await browser.evaluate<{ drawnFrom: string; visited: string[]; steps: string[]; lines: string[] }>(`
      return {
        drawnFrom: document.getElementById('pathway-drawing').dataset.drawnFrom,
        visited: [...document.querySelectorAll('#pathway-section [data-node-id][data-visited=true]')].map((g) => g.dataset.nodeId),
        steps: [...document.querySelectorAll('[data-testid=pathway-path] li')].map((li) => li.dataset.node + ' ' + (li.dataset.edge ?? '')),
        lines: [...document.querySelector('[data-testid=transcript]').children].map((li) => li.dataset.role + ': ' + li.querySelector('.text').textContent + ' ' + [...li.querySelectorAll('.flag')].map((f) => f.textContent).join(' ')),
      };
    `);
    expect(page.drawnFrom).toBe('store');
    expect(page.visited).toEqual(['menu', 'hours']);
    expect(page.steps).toEqual(['menu ', 'hours /edges/0']);
    expect(page.lines.some((line) => line.startsWith('caller: 1') && line.includes('(a key pressed)'))).toBe(true);
    expect(await cspViolations(browser)).toEqual([]);
  }, 180_000);
});
