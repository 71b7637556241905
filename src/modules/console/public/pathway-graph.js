// A pathway document drawn as an SVG graph (DESIGN.md "Conversational
// pathways", Console): dagre (vendored from @dagrejs/dagre, assets.ts) lays
// the nodes out top to bottom; each node is a box coloured by its type with
// its id and what it says or does, each edge an arrow with its condition. The
// start is marked by an arrow from a dot; global edges leave one dashed box,
// "any conversation node". Validation issues mark the node or edge they name
// (data-issue="error"|"warning", the messages in its tooltip); a call's path
// marks the nodes it visited (data-visited="true") and the edges it took
// (data-taken="true"). Elements are built, never parsed from strings. A large
// graph is laid out in a worker (pathway-layout-worker.js), so the page stays
// responsive however long dagre takes.
import dagre from './dagre.js';
import { layoutGraph } from './pathway-layout.js';
import { NODE_TYPE_NAMES, edgeLines, issueTarget, nodeLines, wrap } from './pathway-labels.js';

const SVG = 'http://www.w3.org/2000/svg';
const START = '\u0000start';
const GLOBAL = '\u0000global';
const NODE_WIDTH = 232;
const LINE = 16;
const CHARS = 32;
let drawings = 0;
/** Nodes plus edges up to which the page lays a graph out itself (measured: about 100 ms at 100). */
export const IN_PAGE_LAYOUT_MAX = 150;
const WORKER_URL = '/console/assets/pathway-layout-worker.js';

/**
 * The nodes and edges to draw, with their boxes, in the order they were added;
 * place() adds dagre's positions (x, y; an edge's points).
 */
class GraphModel {
  nodeData = new Map();
  edgeData = new Map();
  size = { width: 0, height: 0 };
  setNode(id, data) {
    this.nodeData.set(id, data);
  }
  hasNode(id) {
    return this.nodeData.has(id);
  }
  setEdge(v, w, data, name) {
    this.edgeData.set(name, { ...data, v, w, name });
  }
  nodes() {
    return [...this.nodeData.keys()];
  }
  node(id) {
    return this.nodeData.get(id);
  }
  edges() {
    return [...this.edgeData.values()].map(({ v, w, name }) => ({ v, w, name }));
  }
  edge(e) {
    return this.edgeData.get(e.name);
  }
  graph() {
    return this.size;
  }
  /** What dagre needs: plain data (it may cross to the worker). */
  toLayoutModel() {
    return {
      nodes: [...this.nodeData].map(([id, d]) => ({ id, width: d.width, height: d.height })),
      edges: [...this.edgeData.values()].map((e) => ({
        v: e.v,
        w: e.w,
        name: e.name,
        width: e.width,
        height: e.height,
      })),
    };
  }
  place(layout) {
    this.size = { width: layout.width, height: layout.height };
    for (const [id, position] of Object.entries(layout.nodes)) Object.assign(this.nodeData.get(id), position);
    for (const [name, route] of Object.entries(layout.edges)) Object.assign(this.edgeData.get(name), route);
  }
}

let workerUrl = null;
/** The worker's URL as Trusted Types want it (the console's CSP requires them for script URLs): this one URL only. */
function trustedWorkerUrl() {
  if (!globalThis.trustedTypes) return WORKER_URL;
  workerUrl ??= globalThis.trustedTypes
    .createPolicy('pathway-layout-worker', {
      createScriptURL: (url) => {
        if (url !== WORKER_URL) throw new TypeError(`not the layout worker: ${url}`);
        return url;
      },
    })
    .createScriptURL(WORKER_URL);
  return workerUrl;
}

/** dagre's layout of the model: in the page when small, else in a worker (one per layout, ended after). */
function layOut(model) {
  const data = model.toLayoutModel();
  if (data.nodes.length + data.edges.length <= IN_PAGE_LAYOUT_MAX)
    return Promise.resolve({ layout: layoutGraph(dagre, data), where: 'page' });
  return new Promise((resolve, reject) => {
    const worker = new Worker(trustedWorkerUrl(), { type: 'module' });
    worker.addEventListener('message', (event) => {
      worker.terminate();
      if (event.data.ok) resolve({ layout: event.data.layout, where: 'worker' });
      else reject(new Error(`the graph could not be laid out: ${event.data.message}`));
    });
    worker.addEventListener('error', (event) => {
      worker.terminate();
      reject(new Error(`the layout worker failed: ${event.message ?? 'unknown error'}`));
    });
    worker.postMessage(data);
  });
}

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes))
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

const textLines = (lines, x, y, attributes = {}) =>
  lines.map((line, i) => svg('text', { x, y: y + i * LINE, ...attributes }, document.createTextNode(line)));

/** Issues by what they name: `nodes` and `edges` maps of `{ level, messages }`, and `rest` (the document's own). */
export function placeIssues(pathway, { errors = [], warnings = [] } = {}) {
  const nodes = new Map();
  const edges = new Map();
  const rest = [];
  const add = (map, key, level, issue) => {
    const entry = map.get(key) ?? { level, messages: [] };
    if (level === 'error') entry.level = 'error';
    entry.messages.push(`${level === 'error' ? 'Error' : 'Warning'}: ${issue.message} (${issue.path || '/'})`);
    map.set(key, entry);
  };
  for (const [level, list] of [
    ['error', errors],
    ['warning', warnings],
  ])
    for (const issue of list) {
      const target = issueTarget(pathway, issue.path);
      if (target.node) add(nodes, target.node, level, issue);
      else if (target.edge) add(edges, target.edge, level, issue);
      else rest.push({ level, ...issue });
    }
  return { nodes, edges, rest };
}

/**
 * The SVG of `pathway`. Options: `issues` (from placeIssues), `visited` (a
 * Set of node ids), `taken` (a Set of edge refs: "/edges/3", "/global/0"),
 * `current` (a node id).
 */
export async function drawPathway(pathway, { issues, visited = new Set(), taken = new Set(), current } = {}) {
  const prefix = `pathway-${++drawings}`;
  const graph = new GraphModel();

  const nodes = (Array.isArray(pathway.nodes) ? pathway.nodes : []).filter(
    (node) => node && typeof node.id === 'string' && node.id,
  );
  const known = new Set(nodes.map((node) => node.id));
  for (const node of nodes) {
    if (graph.hasNode(node.id)) continue;
    const lines = nodeLines(node).flatMap((line) => wrap(line, CHARS, 3));
    graph.setNode(node.id, { node, lines, width: NODE_WIDTH, height: 34 + lines.length * LINE + 8 });
  }
  if (known.has(pathway.start)) {
    graph.setNode(START, { width: 14, height: 14 });
    graph.setEdge(START, pathway.start, { lines: [], width: 0, height: 0 }, 'start');
  }
  const label = (lines) => {
    const wrapped = lines.flatMap((line) => wrap(line, 28, 2));
    return {
      lines: wrapped,
      width: wrapped.length ? Math.max(...wrapped.map((l) => l.length)) * 6.6 + 10 : 0,
      height: wrapped.length * 14 + (wrapped.length ? 6 : 0),
      labelpos: 'c',
    };
  };
  const edges = Array.isArray(pathway.edges) ? pathway.edges : [];
  const leaving = new Map();
  for (const edge of edges) leaving.set(edge?.from, (leaving.get(edge?.from) ?? 0) + 1);
  edges.forEach((edge, i) => {
    if (!known.has(edge?.from) || !known.has(edge?.to)) return;
    const siblings = leaving.get(edge.from) > 1;
    graph.setEdge(edge.from, edge.to, { ref: `/edges/${i}`, ...label(edgeLines(edge, siblings)) }, `/edges/${i}`);
  });
  const globals = (Array.isArray(pathway.global) ? pathway.global : []).filter((edge) => known.has(edge?.to));
  if (globals.length) {
    graph.setNode(GLOBAL, { lines: [], width: 180, height: 40 });
    (pathway.global ?? []).forEach((edge, i) => {
      if (!known.has(edge?.to)) return;
      graph.setEdge(
        GLOBAL,
        edge.to,
        { ref: `/global/${i}`, global: true, ...label(edgeLines(edge, false)) },
        `/global/${i}`,
      );
    });
  }
  const { layout, where } = await layOut(graph);
  graph.place(layout);

  const { width, height } = graph.graph();
  const root = svg('svg', {
    'data-testid': 'pathway-graph',
    class: 'pathway-graph',
    role: 'img',
    'aria-label': `The pathway ${typeof pathway.name === 'string' ? pathway.name : ''} as a graph`,
    'data-layout': where,
    width: Math.ceil(width),
    height: Math.ceil(height),
    viewBox: `0 0 ${Math.ceil(width)} ${Math.ceil(height)}`,
  });
  root.append(
    svg(
      'defs',
      {},
      ...['plain', 'taken'].map((kind) =>
        svg(
          'marker',
          {
            id: `${prefix}-arrow-${kind}`,
            viewBox: '0 0 10 10',
            refX: 9,
            refY: 5,
            markerWidth: 7,
            markerHeight: 7,
            orient: 'auto-start-reverse',
            class: `arrow arrow-${kind}`,
          },
          svg('path', { d: 'M 0 0 L 10 5 L 0 10 z' }),
        ),
      ),
    ),
  );

  const edgeLayer = svg('g', { class: 'edges' });
  for (const e of graph.edges()) {
    const data = graph.edge(e);
    const ref = e.name === 'start' ? 'start' : data.ref;
    const wasTaken = ref === 'start' ? visited.has(pathway.start) : taken.has(ref);
    const issue = issues?.edges.get(ref);
    const points = data.points.map((p) => `${p.x.toFixed(1)} ${p.y.toFixed(1)}`);
    const group = svg(
      'g',
      {
        class: `edge${data.global ? ' global' : ''}`,
        'data-edge': ref,
        'data-taken': wasTaken ? 'true' : undefined,
        'data-issue': issue?.level,
      },
      issue || data.lines.length
        ? svg('title', {}, document.createTextNode([...data.lines, ...(issue?.messages ?? [])].join('\n')))
        : null,
      svg('path', {
        d: `M ${points.join(' L ')}`,
        'marker-end': `url(#${prefix}-arrow-${wasTaken ? 'taken' : 'plain'})`,
      }),
    );
    if (data.lines.length) {
      group.append(
        svg('rect', {
          class: 'edge-label',
          x: data.x - data.width / 2,
          y: data.y - data.height / 2,
          width: data.width,
          height: data.height,
          rx: 4,
        }),
        ...textLines(data.lines, data.x, data.y - data.height / 2 + 14, { 'text-anchor': 'middle' }),
      );
    }
    edgeLayer.append(group);
  }
  root.append(edgeLayer);

  const nodeLayer = svg('g', { class: 'nodes' });
  for (const id of graph.nodes()) {
    const box = graph.node(id);
    const left = box.x - box.width / 2;
    const top = box.y - box.height / 2;
    if (id === START) {
      nodeLayer.append(svg('circle', { class: 'start-dot', cx: box.x, cy: box.y, r: 7 }));
      continue;
    }
    if (id === GLOBAL) {
      nodeLayer.append(
        svg(
          'g',
          { class: 'node global', 'data-global': 'true' },
          svg('rect', { x: left, y: top, width: box.width, height: box.height, rx: 8 }),
          ...textLines(['Any conversation node'], box.x, box.y + 4, { 'text-anchor': 'middle', class: 'title' }),
        ),
      );
      continue;
    }
    const node = box.node;
    const issue = issues?.nodes.get(id);
    const type = typeof node.type === 'string' ? node.type : 'unknown';
    // `visited`: a node of a call's path drawn without its document (call-path.js).
    const kind = NODE_TYPE_NAMES[type] ?? (type === 'visited' ? 'Visited' : type);
    const styled = NODE_TYPE_NAMES[type] || type === 'visited';
    const group = svg(
      'g',
      {
        class: `node type-${styled ? type : 'unknown'}`,
        'data-node-id': id,
        'data-node-type': type,
        'data-start': id === pathway.start ? 'true' : undefined,
        'data-visited': visited.has(id) ? 'true' : undefined,
        'data-current': id === current ? 'true' : undefined,
        'data-issue': issue?.level,
        tabindex: 0,
      },
      svg('title', {}, document.createTextNode([`${kind} node ${id}`, ...(issue?.messages ?? [])].join('\n'))),
      svg('rect', { x: left, y: top, width: box.width, height: box.height, rx: 8 }),
      svg('rect', { class: 'band', x: left, y: top, width: 6, height: box.height, rx: 3 }),
      ...textLines([kind], left + 14, top + 17, { class: 'kind' }),
      ...textLines([id.length > 24 ? `${id.slice(0, 23)}\u2026` : id], left + box.width - 10, top + 17, {
        class: 'id',
        'text-anchor': 'end',
      }),
      ...textLines(box.lines, left + 14, top + 38, { class: 'line' }),
    );
    if (issue) {
      group.append(
        svg('circle', { class: 'issue-mark', cx: left + box.width - 2, cy: top + 2, r: 9 }),
        ...textLines(['!'], left + box.width - 2, top + 6.5, { class: 'issue-text', 'text-anchor': 'middle' }),
      );
    }
    nodeLayer.append(group);
  }
  root.append(nodeLayer);
  return root;
}
