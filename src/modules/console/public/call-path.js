// The call page's path (DESIGN.md "Conversational pathways", Record and
// Console): the call record's `pathway` `{ id?, name, path: [{ node, atMs,
// edge? }], variables }` drawn on its pathway, read from the account's
// `conversational-pathways` store when the record names it by id (an inline
// pathway's record carries its `document`): the nodes
// the call visited marked data-visited="true", the edges it took
// data-taken="true", the node it is at while it runs. A pathway with neither
// (deleted since, an older record), or a stored one edited since so that the
// path no longer fits it, is drawn as the chain of the nodes visited. The
// steps and the variables are listed below the graph.
import { byId, el, formatDuration } from './common.js';
import { edgeLines } from './pathway-labels.js';
import { graphFrame } from './pathway-view.js';
import { readRecord } from './records.js';

const isDocument = (value) =>
  value && typeof value === 'object' && Array.isArray(value.nodes) && Array.isArray(value.edges);

/** A document of the path alone: each node visited once, linked in the order the call went, by the edge it took. */
function chainOf(pathRecord) {
  const ids = [...new Set(pathRecord.path.map((entry) => entry.node))];
  return {
    name: pathRecord.name,
    start: pathRecord.path[0]?.node,
    nodes: ids.map((id) => ({ id, type: 'visited' })),
    edges: pathRecord.path.slice(1).map((entry, i) => ({ from: pathRecord.path[i].node, to: entry.node })),
  };
}

/** The edge a path entry names, in the document (for its label). */
function edgeAt(pathway, ref) {
  const [, part, index] = String(ref ?? '').split('/');
  const list = part === 'edges' ? pathway.edges : part === 'global' ? pathway.global : null;
  return Array.isArray(list) ? list[Number(index)] : undefined;
}

/**
 * Whether the path still fits the document: every node visited is in it and
 * every edge taken leads to the next node. A stored pathway edited since the
 * call may not; then the chain is drawn rather than a wrong path.
 */
function pathFits(pathway, path) {
  const ids = new Set(pathway.nodes.map((node) => node?.id));
  return path.every(
    (entry, i) => ids.has(entry.node) && (i === 0 || !entry.edge || edgeAt(pathway, entry.edge)?.to === entry.node),
  );
}

let shown = null;

/** Shows `call.pathway` (hidden when the call walked none); redrawn only when the record changed. */
export async function showCallPath(call, running) {
  const record = call.pathway;
  const section = byId('pathway-section');
  if (!record || !Array.isArray(record.path)) {
    section.hidden = true;
    return;
  }
  const key = JSON.stringify([record, running]);
  if (shown === key) return;
  shown = key;

  // An inline pathway's record carries its document; a stored one is read from the store.
  let pathway = isDocument(record.document) ? record.document : null;
  if (!pathway && typeof record.id === 'string') {
    try {
      const { value } = await readRecord(record.id);
      if (isDocument(value)) pathway = value;
    } catch {
      // deleted since, or not readable here: the chain below
    }
  }
  const changed = pathway !== null && !pathFits(pathway, record.path);
  if (changed) pathway = null;
  const drawn = pathway ?? chainOf(record);
  const edgeRefs = pathway ? record.path.map((entry) => entry.edge).filter(Boolean) : [];
  const taken = new Set(pathway ? edgeRefs : record.path.slice(1).map((_, i) => `/edges/${i}`));
  const visited = new Set(record.path.map((entry) => entry.node));
  const current = running ? record.path.at(-1)?.node : undefined;
  const { frame, legend } = await graphFrame(drawn, { visited, taken, current });
  legend.append(el('li', { class: 'visited' }, el('span', { class: 'swatch' }), 'Visited by this call'));
  byId('pathway-drawing').replaceChildren(frame, legend);
  byId('pathway-drawing').dataset.drawnFrom = !pathway ? 'path' : pathway === record.document ? 'record' : 'store';

  const about = [`${record.name ?? 'Pathway'}: ${record.path.length} step${record.path.length === 1 ? '' : 's'}.`];
  if (!pathway)
    about.push(
      changed
        ? 'The pathway has changed since this call (a node or edge it took is not where it was): its path alone is drawn.'
        : typeof record.id === 'string'
          ? 'The pathway could not be read from the store (deleted, or not readable here): its path alone is drawn.'
          : 'An inline pathway (not in the store): its path alone is drawn.',
    );
  byId('pathway-about').replaceChildren(
    about.join(' '),
    typeof record.id === 'string' && pathway
      ? el(
          'span',
          {},
          ' ',
          el('a', { href: `/console/pathways?id=${encodeURIComponent(record.id)}`, text: 'Open the pathway' }),
        )
      : '',
  );

  byId('pathway-path').replaceChildren(
    ...record.path.map((entry) => {
      const edge = pathway ? edgeAt(pathway, entry.edge) : undefined;
      const why = edge ? edgeLines(edge, false).join('; ') : '';
      return el(
        'li',
        { 'data-node': entry.node, 'data-edge': entry.edge },
        el('span', { class: 'flag', text: formatDuration((entry.atMs ?? 0) / 1000) }),
        ' ',
        el('code', { text: entry.node }),
        entry.edge ? el('span', { class: 'flag', text: `by ${entry.edge}${why ? `: ${why}` : ''}` }) : null,
      );
    }),
  );

  const variables = Object.entries(record.variables ?? call.variables ?? {});
  byId('call-variables').replaceChildren(
    ...variables.flatMap(([name, value]) => [
      el('dt', { text: name }),
      el('dd', { 'data-variable': name, text: typeof value === 'string' ? value : JSON.stringify(value) }),
    ]),
  );
  byId('call-variables-empty').hidden = variables.length > 0;
  section.hidden = false;
}
