// /console/pathways: the records of the account's `conversational-pathways`
// store, and one of them (?id=, else the first) checked by the validate route
// and drawn as a graph with its errors and warnings on the nodes they name. A
// document written in the form is checked and drawn the same way, and saved
// (encrypted in this browser, records.js) only when valid: as a new record, or
// over the record being edited if nobody changed it since (If-Match).
import { ApiError, byId, el, formatDate, startPage } from './common.js';
import { checkPathway, graphFrame, issueList, validityLine } from './pathway-view.js';
import { listStore, writeRecord } from './records.js';

const STORE = 'conversational-pathways';
/** The stored record the form holds, while editing one: `{ id, version, name }`. */
let editing = null;

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
  // "drawn" once the graph of this document is on the page (a large one is laid out in a worker).
  view.dataset.state = 'drawing';
  view.dataset.pathwayId = id ?? '';
  byId('pathway-title').textContent = typeof pathway.name === 'string' && pathway.name ? pathway.name : 'Pathway';
  byId('pathway-description').textContent = [
    typeof pathway.description === 'string' ? pathway.description : '',
    id ? `Id ${id}.` : 'Not stored: the document of the form below.',
  ]
    .filter(Boolean)
    .join(' ');
  const check = await checkPathway(pathway);
  view.dataset.valid = String(check.valid);
  const { frame, legend } = await graphFrame(pathway, { check });
  byId('pathway-validity').replaceChildren(validityLine(check));
  byId('pathway-drawing').replaceChildren(frame, legend);
  byId('pathway-issues').replaceChildren(issueList(pathway, check));
  byId('pathway-issues-section').hidden = check.errors.length + check.warnings.length === 0;
  showVariables(pathway);
  view.dataset.state = 'drawn';
  return check;
}

/** The form's document, or null with the reason shown. */
function formDocument() {
  const error = byId('check-error');
  error.textContent = '';
  let pathway;
  try {
    pathway = JSON.parse(byId('pathway-json').value);
  } catch (err) {
    error.textContent = `Not JSON: ${err.message}`;
    return null;
  }
  if (!isDocument(pathway)) {
    error.textContent = 'A pathway document is a JSON object: { name, start, nodes, edges, … }.';
    return null;
  }
  return pathway;
}

function showEditing() {
  byId('editing').hidden = !editing;
  byId('editing').textContent = editing ? `Editing "${editing.name}" (${editing.id}), version ${editing.version}.` : '';
  byId('pathway-save').textContent = editing ? 'Save changes' : 'Save to the store';
  byId('pathway-new').hidden = !editing;
}

/** Checks the form's document and stores it when valid: over the record being edited, or as a new one (`asNew`). */
async function save(asNew) {
  const pathway = formDocument();
  if (!pathway) return;
  const error = byId('check-error');
  try {
    const check = await show(pathway, null);
    if (!check.valid) {
      error.textContent = 'Not saved: the pathway is not valid (its errors are listed above).';
      return;
    }
    const target = editing && !asNew ? editing : {};
    const object = await writeRecord(STORE, pathway, target);
    location.assign(`/console/pathways?id=${encodeURIComponent(object.id)}&saved=1`);
  } catch (err) {
    error.textContent =
      err instanceof ApiError && err.status === 412
        ? 'Not saved: the pathway was changed elsewhere since you opened it. Reload the page to edit the new version.'
        : `Not saved: ${err.message}`;
  }
}

async function load() {
  const selected = new URLSearchParams(location.search).get('id');
  let records = [];
  try {
    records = await listStore(STORE);
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
    byId('saved-note').hidden = new URLSearchParams(location.search).get('saved') !== '1';
    try {
      await show(chosen.value, chosen.object.id);
    } catch (error) {
      byId('pathways-error').textContent = `The pathway could not be checked: ${error.message}`;
    }
    const tryIt = byId('pathway-try');
    tryIt.href = `/console?pathway=${encodeURIComponent(chosen.object.id)}`;
    tryIt.hidden = false;
    const edit = byId('pathway-edit');
    edit.hidden = false;
    edit.addEventListener('click', () => {
      byId('pathway-json').value = JSON.stringify(chosen.value, null, 2);
      editing = { id: chosen.object.id, version: chosen.object.version, name: chosen.value.name ?? chosen.object.id };
      showEditing();
      byId('pathway-json').focus();
    });
  }
  byId('pathway-save').addEventListener('click', () => save(false));
  byId('pathway-new').addEventListener('click', () => save(true));

  byId('check-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const pathway = formDocument();
    if (!pathway) return;
    const error = byId('check-error');
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
