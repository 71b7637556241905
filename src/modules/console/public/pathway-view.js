// Checking and showing a pathway on a page (/console/pathways, the call page):
// the validate route's answer, the graph in its scrolling frame with a legend,
// and the list of issues, each naming the node or edge it marks.
import { ApiError, api, el } from './common.js';
import { drawPathway, placeIssues } from './pathway-graph.js';
import { NODE_TYPE_NAMES, issueTarget } from './pathway-labels.js';

/** POST /api/pathways/validate: `{ valid, errors, warnings }` (a 422's errors; another failure is thrown). */
export async function checkPathway(pathway) {
  try {
    const { data } = await api('/api/pathways/validate', { method: 'POST', body: pathway });
    return { valid: true, errors: [], warnings: data.warnings ?? [] };
  } catch (error) {
    if (error instanceof ApiError && error.status === 422 && Array.isArray(error.body?.errors))
      return { valid: false, errors: error.body.errors, warnings: [] };
    throw error;
  }
}

/** The issues as a list (`data-testid="pathway-issues"`): each `data-level`, `data-path`, and `data-node` when it marks one. */
export function issueList(pathway, check) {
  const items = [
    ...check.errors.map((issue) => ({ level: 'error', ...issue })),
    ...check.warnings.map((issue) => ({ level: 'warning', ...issue })),
  ];
  return el(
    'ul',
    { 'data-testid': 'pathway-issues', class: 'issues' },
    ...items.map((issue) => {
      const target = issueTarget(pathway, issue.path);
      return el(
        'li',
        { 'data-level': issue.level, 'data-path': issue.path, 'data-node': target.node, 'data-edge': target.edge },
        el('span', { class: `badge level-${issue.level}`, text: issue.level }),
        ' ',
        el('code', { text: issue.path || '/' }),
        target.node ? el('span', { class: 'flag', text: `node ${target.node}` }) : null,
        target.edge ? el('span', { class: 'flag', text: `edge ${target.edge}` }) : null,
        ' ',
        el('span', { text: issue.message }),
      );
    }),
  );
}

/** A line saying whether the pathway is valid (`data-testid="pathway-validity"`, `data-valid`). */
export function validityLine(check) {
  const count = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const text = check.valid
    ? check.warnings.length
      ? `Valid, with ${count(check.warnings.length, 'warning')}.`
      : 'Valid.'
    : `Not valid: ${count(check.errors.length, 'error')}. Calls refuse it with 422 invalid_pathway.`;
  return el('p', {
    'data-testid': 'pathway-validity',
    'data-valid': String(check.valid),
    class: check.valid ? 'validity ok' : 'validity error',
    text,
  });
}

/** The graph in a frame that scrolls on its own (a wide graph never widens the page), and a legend of node types. */
export async function graphFrame(pathway, options = {}) {
  const check = options.check ?? { errors: [], warnings: [] };
  const frame = el('div', { class: 'graph-frame', tabindex: '0', 'aria-label': 'Pathway graph (scrolls)' });
  frame.append(await drawPathway(pathway, { ...options, issues: placeIssues(pathway, check) }));
  const legend = el(
    'ul',
    { class: 'legend', 'aria-label': 'Node types' },
    ...Object.entries(NODE_TYPE_NAMES).map(([type, name]) =>
      el('li', { class: `type-${type}` }, el('span', { class: 'swatch' }), name),
    ),
    el('li', { class: 'global' }, el('span', { class: 'swatch' }), 'Global edges'),
  );
  return { frame, legend };
}
