// /console/pathways: the records of the account's `conversational-pathways`
// store, and one of them (?id=, else the first) checked by the validate route
// and drawn as a graph with its errors and warnings on the nodes they name. A
// pasted document is checked and drawn the same way, without being stored.
import { ApiError, byId, el, formatDate, startPage } from './common.js';
import { checkPathway, graphFrame, issueList, validityLine } from './pathway-view.js';
import { listStore } from './records.js';

const isDocument = (value) => value && typeof value === 'object' && !Array.isArray(value);
const count = (value) => (Array.isArray(value) ? String(value.length) : '—');

function row({ object, value }, selected) {
  const readable = isDocument(value);
  const name =
    readable && typeof value.name === 'string' && value.name ? value.name : `Pathway ${object.id.slice(0, 8)}…`;
  const link = el('a', {
    href: `/console/pathways?id=${encodeURIComponent(object.id)}`,
    'aria-current': object.id === selected ? 'true' : undefined,
    text: name,
  });
  return el(
    'tr',
    { 'data-testid': 'pathway-row', 'data-pathway-id': object.id, 'data-readable': String(Boolean(readable)) },
    el(
      'td',
      { 'data-label': 'Name' },
      link,
      readable ? null : el('span', { class: 'flag', text: '(not readable here)' }),
    ),
    el('td', { 'data-label': 'Nodes', class: 'num', text: readable ? count(value.nodes) : '—' }),
    el('td', { 'data-label': 'Edges', class: 'num', text: readable ? count(value.edges) : '—' }),
    el('td', { 'data-label': 'Updated', text: formatDate(object.updatedAt) }),
    el('td', { 'data-label': 'Id' }, el('code', { text: object.id })),
  );
}

function showVariables(pathway) {
  const variables = isDocument(pathway.variables) ? Object.entries(pathway.variables) : [];
  byId('pathway-variables').replaceChildren(
    ...variables.map(([name, variable]) =>
      el(
        'tr',
        {},
        el('td', { 'data-label': 'Name' }, el('code', { text: name })),
        el('td', {
          'data-label': 'Type',
          text:
            variable?.type === 'enum' && Array.isArray(variable.values)
              ? `enum: ${variable.values.join(', ')}`
              : String(variable?.type ?? '—'),
        }),
        el('td', { 'data-label': 'Description', text: variable?.description ?? '' }),
      ),
    ),
  );
  if (!variables.length)
    byId('pathway-variables').append(el('tr', {}, el('td', { colspan: '3', class: 'empty', text: 'None declared.' })));
}

/** Checks `pathway` with the service and draws it in the view. */
async function show(pathway, id) {
  const view = byId('pathway-view');
  view.hidden = false;
  view.dataset.pathwayId = id ?? '';
  byId('pathway-title').textContent = typeof pathway.name === 'string' && pathway.name ? pathway.name : 'Pathway';
  byId('pathway-description').textContent = [
    typeof pathway.description === 'string' ? pathway.description : '',
    id ? `Id ${id}.` : 'Not stored: a pasted document.',
  ]
    .filter(Boolean)
    .join(' ');
  const check = await checkPathway(pathway);
  const { frame, legend } = graphFrame(pathway, { check });
  byId('pathway-validity').replaceChildren(validityLine(check));
  byId('pathway-drawing').replaceChildren(frame, legend);
  byId('pathway-issues').replaceChildren(issueList(pathway, check));
  byId('pathway-issues-section').hidden = check.errors.length + check.warnings.length === 0;
  showVariables(pathway);
}

async function load() {
  const selected = new URLSearchParams(location.search).get('id');
  let records = [];
  try {
    records = await listStore('conversational-pathways');
  } catch (error) {
    byId('pathways-error').textContent = `The pathways could not be listed: ${error.message}`;
  }
  byId('pathway-list').replaceChildren(...records.map((record) => row(record, selected)));
  byId('pathways-empty').hidden = records.length > 0;
  const chosen =
    records.find((r) => r.object.id === selected) ?? (selected ? null : records.find((r) => isDocument(r.value)));
  if (selected && !chosen) byId('pathways-error').textContent = 'No such pathway in this account.';
  else if (chosen && !isDocument(chosen.value))
    byId('pathways-error').textContent =
      'This pathway cannot be opened in this browser (WebCrypto needs https or localhost).';
  else if (chosen) {
    try {
      await show(chosen.value, chosen.object.id);
    } catch (error) {
      byId('pathways-error').textContent = `The pathway could not be checked: ${error.message}`;
    }
  }

  byId('check-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const error = byId('check-error');
    error.textContent = '';
    let pathway;
    try {
      pathway = JSON.parse(byId('pathway-json').value);
    } catch (err) {
      error.textContent = `Not JSON: ${err.message}`;
      return;
    }
    if (!isDocument(pathway)) {
      error.textContent = 'A pathway document is a JSON object: { name, start, nodes, edges, … }.';
      return;
    }
    try {
      await show(pathway, null);
      byId('pathway-view').scrollIntoView();
    } catch (err) {
      error.textContent =
        err instanceof ApiError ? `The service refused it: ${err.message}` : `It could not be checked: ${err.message}`;
    }
  });
  byId('content').dataset.ready = 'true';
}

startPage(load);
