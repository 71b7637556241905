// What the pathway graph writes on its nodes and edges (pathway-graph.js),
// and which node or edge a validation issue's JSON pointer names. The
// document may be invalid (it is drawn to show its errors): every field is
// read defensively.

export const NODE_TYPE_NAMES = {
  conversation: 'Conversation',
  webhook: 'Webhook',
  transfer: 'Transfer',
  digits: 'Digits',
  sms: 'SMS',
  end: 'End',
};

const text = (value) => (typeof value === 'string' ? value.trim().replace(/\s+/g, ' ') : '');

/** The lines under a node's title: what it says or does. */
export function nodeLines(node) {
  switch (node?.type) {
    case 'conversation':
      return [
        text(node.say) && `"${text(node.say)}"`,
        text(node.prompt),
        Array.isArray(node.extract) && node.extract.length ? `collects ${node.extract.join(', ')}` : '',
        Array.isArray(node.tools) && node.tools.length
          ? `tools ${node.tools.map((tool) => (typeof tool === 'string' ? tool : tool?.name)).join(', ')}`
          : '',
      ].filter(Boolean);
    case 'webhook':
      return [
        `${text(node.method) || 'POST'} ${text(node.url)}`,
        node.assign && typeof node.assign === 'object' ? `sets ${Object.keys(node.assign).join(', ')}` : '',
      ].filter(Boolean);
    case 'transfer':
      return [
        text(node.say) && `"${text(node.say)}"`,
        text(node.humanAgentId) && `to ${text(node.humanAgentId)}`,
      ].filter(Boolean);
    case 'digits':
      return [`sends ${text(node.send)}`];
    case 'sms':
      return [text(node.text) && `texts "${text(node.text)}"`].filter(Boolean);
    case 'end':
      return [text(node.say) && `"${text(node.say)}"`, 'hangs up'].filter(Boolean);
    default:
      return [];
  }
}

function conditionText(condition) {
  if (!condition || typeof condition !== 'object') return '';
  const ops = { eq: '=', ne: '\u2260', gt: '>', lt: '<', in: 'in' };
  if (condition.op === 'exists') return `${condition.var} is set`;
  const value = Array.isArray(condition.value) ? condition.value.join(', ') : String(condition.value ?? '');
  return `${condition.var} ${ops[condition.op] ?? condition.op} ${value}`;
}

/** An edge's label lines: its `if`, `when` and `keywords`; "otherwise" for an unconditioned edge beside others. */
export function edgeLines(edge, hasSiblings) {
  const lines = [];
  if (edge.if) lines.push(`if ${conditionText(edge.if)}`);
  if (text(edge.when)) lines.push(text(edge.when));
  if (Array.isArray(edge.keywords) && edge.keywords.length)
    lines.push(edge.keywords.map((word) => `"${word}"`).join(' / '));
  if (!lines.length && hasSiblings) lines.push('otherwise');
  return lines;
}

/**
 * Where an issue belongs: `{ node: id }` for `/nodes/3/...` (by the node's id
 * when it has one), `{ edge: "/edges/2" }` or `{ edge: "/global/0" }`, else
 * `{}` (the document: `/start`, `/variables/x`, the limits).
 */
export function issueTarget(document, path) {
  const [, part, index] = String(path).split('/');
  const i = Number(index);
  if (part === 'nodes' && Number.isInteger(i)) {
    const id = document?.nodes?.[i]?.id;
    return typeof id === 'string' && id ? { node: id } : {};
  }
  if ((part === 'edges' || part === 'global') && Number.isInteger(i)) return { edge: `/${part}/${i}` };
  if (part === 'start' && typeof document?.start === 'string') return { node: document.start };
  return {};
}

/** Cuts `value` into lines of at most `width` characters, at most `max` lines (the last one ending in an ellipsis). */
export function wrap(value, width, max) {
  const words = String(value).split(' ');
  const lines = [];
  let line = '';
  for (const word of words) {
    const piece = word.length > width ? `${word.slice(0, width - 1)}\u2026` : word;
    if (line && line.length + 1 + piece.length > width) {
      lines.push(line);
      line = piece;
    } else line = line ? `${line} ${piece}` : piece;
  }
  if (line) lines.push(line);
  if (lines.length <= max) return lines;
  const kept = lines.slice(0, max);
  kept[max - 1] = `${kept[max - 1].slice(0, width - 1)}\u2026`;
  return kept;
}
