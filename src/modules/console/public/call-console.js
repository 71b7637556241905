// /console: pick an agent (or write a prompt) and optionally a pathway of the
// account's store (?pathway=<id> picks one), press Call, talk, hang up.
import { ApiError, api, byId, el, startPage } from './common.js';
import { listAgents } from './agents.js';
import { followPath } from './live-path.js';
import { listStore } from './records.js';
import { WebCall } from './web-call.js';

let call = null;
/** The pathways of the picker by id (their documents), and the live path of the call under way. */
const pathways = new Map();
let livePath = null;

function fillAgents(agents) {
  const select = byId('agent');
  for (const agent of agents) {
    const label = agent.knowledgeBaseId ? `${agent.name} (with a knowledge base)` : agent.name;
    select.append(el('option', { value: agent.id, text: label }));
  }
  if (agents.length) select.value = agents[0].id;
  byId('agent-hint').textContent = agents.length
    ? `${agents.length} agent${agents.length === 1 ? '' : 's'} in your agents store${agents.some((a) => !a.readable) ? ' (some listed by id: their records could not be opened in this browser)' : ''}.`
    : 'No agents in your agents store yet: write a prompt below.';
  showPromptFields();
}

function showPromptFields() {
  byId('prompt-fields').hidden = byId('agent').value !== '';
}

async function fillKnowledgeBases() {
  const { data } = await api('/api/knowledge-bases');
  const select = byId('knowledge-base');
  for (const base of data) select.append(el('option', { value: base.id, text: base.name }));
}

/** The pathways of the account's store, for the pathway picker; the one `?pathway=` names is picked. */
async function fillPathways() {
  const records = await listStore('conversational-pathways');
  const select = byId('pathway');
  for (const { object, value } of records) {
    if (value && typeof value === 'object') pathways.set(object.id, value);
    const name =
      value && typeof value.name === 'string' && value.name ? value.name : `Pathway ${object.id.slice(0, 8)}\u2026`;
    select.append(el('option', { value: object.id, text: name }));
  }
  const wanted = new URLSearchParams(location.search).get('pathway');
  if (wanted && records.some((r) => r.object.id === wanted)) select.value = wanted;
}

/** The body of POST /api/calls/web from the form. */
function callRequest() {
  const agentId = byId('agent').value;
  const knowledgeBaseId = byId('knowledge-base').value || undefined;
  const pathwayId = byId('pathway').value || undefined;
  const extras = { ...(knowledgeBaseId ? { knowledgeBaseId } : {}), ...(pathwayId ? { pathwayId } : {}) };
  if (agentId) return { agentId, ...extras };
  const prompt = byId('prompt').value.trim();
  const firstMessage = byId('first-message').value.trim();
  return { agent: { name: 'Console agent', prompt, ...(firstMessage ? { firstMessage } : {}) }, ...extras };
}

/** Who said a line, and how far: an agent reply shows while it is being said, then as it was heard. */
function whoSaid(role, final, interrupted) {
  if (role === 'caller') return 'You';
  if (final === false) return 'Agent \u00b7 saying';
  return interrupted ? 'Agent \u00b7 cut off (what you heard)' : 'Agent';
}

/**
 * One transcript line per utterance: a partial line is replaced by its final
 * text. An agent reply arrives as the agent starts each sentence (final:
 * false), then once heard (final: true); none of it heard: the line goes.
 */
const pending = { agent: null, caller: null };
function showTranscript({ role, text, final, interrupted }) {
  if (role !== 'agent' && role !== 'caller') return;
  let line = pending[role];
  if (final !== false && !text) {
    line?.remove();
    pending[role] = null;
    return;
  }
  if (!line) {
    line = el('li', { 'data-role': role }, el('span', { class: 'who-said' }), el('span', { class: 'text' }));
    byId('transcript').append(line);
    pending[role] = line;
  }
  line.querySelector('.who-said').textContent = whoSaid(role, final, interrupted);
  line.querySelector('.text').textContent = text;
  line.setAttribute('data-final', final === false ? 'false' : 'true');
  if (interrupted) line.setAttribute('data-interrupted', 'true');
  if (final !== false) pending[role] = null;
  line.scrollIntoView({ block: 'nearest' });
}

function showTool({ name, arguments: args, result }) {
  byId('tools').append(
    el(
      'li',
      {},
      el('strong', { text: name }),
      el('pre', { 'aria-label': `${name} arguments`, text: JSON.stringify(args, null, 2) }),
      el('pre', { 'aria-label': `${name} result`, text: JSON.stringify(result, null, 2) }),
    ),
  );
}

function setStatus(state, text) {
  const status = byId('call-status');
  status.dataset.state = state;
  status.textContent = text;
  const busy = state !== 'idle' && state !== 'ended';
  byId('call').disabled = busy;
  byId('hang-up').disabled = !busy;
  for (const id of ['agent', 'knowledge-base', 'pathway', 'prompt', 'first-message']) byId(id).disabled = busy;
}

async function startCall(event) {
  event.preventDefault();
  if (call) return;
  byId('call-error').textContent = '';
  byId('transcript').replaceChildren();
  byId('tools').replaceChildren();
  byId('call-link').hidden = true;
  pending.agent = pending.caller = null;
  const status = byId('call-status');
  status.dataset.agentAudioMs = '0';
  call = new WebCall({
    onState: (state, text) => setStatus(state, text),
    onTranscript: showTranscript,
    onTool: showTool,
    onAudio: (playedMs) => (status.dataset.agentAudioMs = String(Math.round(playedMs))),
    onEnded: () => {
      livePath?.stop();
      livePath = null;
      const link = byId('call-link');
      if (call?.sessionId) {
        link.href = `/console/calls/${encodeURIComponent(call.sessionId)}`;
        link.hidden = false;
      }
      call = null;
      byId('call').focus();
    },
  });
  try {
    const request = callRequest();
    await call.start(request);
    status.dataset.sessionId = call.sessionId;
    byId('live-path').hidden = true;
    const picked = request.pathwayId && pathways.get(request.pathwayId);
    if (picked && call.sessionId) {
      const following = await followPath(picked, call.sessionId);
      // The call may have ended while the graph was laid out.
      if (call) livePath = following;
      else following.stop();
    }
    byId('hang-up').focus();
  } catch (error) {
    call = null;
    setStatus('idle', 'Not connected.');
    byId('call-error').textContent =
      `The call did not start: ${error.message}${error instanceof ApiError && error.code ? ` (${error.code})` : ''}`;
  }
}

startPage(async () => {
  byId('agent').addEventListener('change', showPromptFields);
  byId('call-form').addEventListener('submit', startCall);
  byId('hang-up').addEventListener('click', () => call?.hangUp());
  // Digits typed during a call are sent as DTMF (outside text fields).
  document.addEventListener('keydown', (event) => {
    if (call?.state !== 'live' || /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName)) return;
    if (/^[0-9*#]$/.test(event.key)) call.sendDigit(event.key);
  });
  const [agents] = await Promise.all([
    listAgents().catch(() => []),
    fillKnowledgeBases().catch(() => {}),
    fillPathways().catch(() => {}),
  ]);
  fillAgents(agents);
  byId('content').dataset.ready = 'true';
});
