// The path of a web call while it runs (/console): the pathway picked for the
// call drawn as on /console/pathways, and each `call_node` event of the call
// (GET /api/events/call_node?session_id=..., the session cookie signing the
// stream in; from the first event, so the start is not missed) marking the
// node entered: data-visited="true", and data-current="true" on the node the
// call is at.
import { byId, el } from './common.js';
import { graphFrame } from './pathway-view.js';

/** Draws `pathway` and follows the call's moves on it; `stop()` ends following (the call ended). */
export async function followPath(pathway, sessionId) {
  const section = byId('live-path');
  const { frame, legend } = await graphFrame(pathway);
  legend.append(el('li', { class: 'visited' }, el('span', { class: 'swatch' }), 'Visited by this call'));
  byId('live-path-drawing').replaceChildren(frame, legend);
  const at = byId('live-node');
  at.textContent = 'Waiting for the first step…';
  section.hidden = false;
  let current = null;
  const events = new EventSource(`/api/events/call_node?session_id=${encodeURIComponent(sessionId)}&lastEventId=0`);
  events.addEventListener('call_node', (event) => {
    const { node } = JSON.parse(event.data);
    current?.removeAttribute('data-current');
    current = frame.querySelector(`[data-node-id="${CSS.escape(node)}"]`);
    current?.setAttribute('data-visited', 'true');
    current?.setAttribute('data-current', 'true');
    at.textContent = `At ${node}.`;
    at.dataset.node = node;
  });
  return {
    stop() {
      events.close();
      current?.removeAttribute('data-current');
      if (at.dataset.node) at.textContent = `Ended at ${at.dataset.node}.`;
    },
  };
}
