// The pathway the docs show: the validate route's example body, and the one
// tests start from.
import type { PathwayDocument } from './schemas.js';

/** A pathway with a webhook node and a branch: look an order up, then tell or transfer. */
export const examplePathway: PathwayDocument = {
  name: 'Order status',
  start: 'greet',
  variables: {
    order_number: { type: 'string', description: 'The order number the caller reads out' },
    order_status: { type: 'enum', values: ['shipped', 'processing', 'unknown'] },
  },
  nodes: [
    {
      id: 'greet',
      type: 'conversation',
      say: 'Hi {{contact.name}}, this is Acme. What is your order number?',
      extract: ['order_number'],
    },
    {
      id: 'lookup',
      type: 'webhook',
      url: 'https://example.com/orders/status',
      method: 'POST',
      body: '{"order": "{{order_number}}"}',
      assign: { order_status: '$.status' },
    },
    { id: 'shipped', type: 'end', say: 'Good news: order {{order_number}} has shipped. Goodbye!' },
    { id: 'person', type: 'transfer', say: 'Let me put you through to a colleague.' },
  ],
  edges: [
    { from: 'greet', to: 'lookup' },
    { from: 'lookup', to: 'shipped', if: { var: 'order_status', op: 'eq', value: 'shipped' } },
    { from: 'lookup', to: 'person' },
  ],
  global: [{ to: 'person', when: 'The caller asks for a person', keywords: ['agent', 'person', 'human'] }],
};
