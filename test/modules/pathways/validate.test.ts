// The pathway validator on every error and warning DESIGN.md lists, each at
// its path in the document, and on a few valid documents (no false alarms).
import { describe, expect, it } from 'vitest';
import { examplePathway } from '../../../src/modules/pathways/examples.js';
import type { PathwayDocument } from '../../../src/modules/pathways/schemas.js';
import { validatePathway } from '../../../src/modules/pathways/validate.js';

type Doc = Record<string, any>;

/** greet → ask (collects `city`) → done, with a global edge to a person. */
function basePathway(): Doc {
  return {
    name: 'Weather',
    start: 'greet',
    variables: { city: { type: 'string' }, plan: { type: 'enum', values: ['basic', 'pro'] }, age: { type: 'number' } },
    nodes: [
      { id: 'greet', type: 'conversation', say: 'Hello {{contact.name}}', prompt: 'Greet the caller' },
      { id: 'ask', type: 'conversation', prompt: 'Ask for the city', extract: ['city'] },
      { id: 'done', type: 'end', say: 'Bye from {{city}}' },
      { id: 'person', type: 'transfer' },
    ],
    edges: [
      { from: 'greet', to: 'ask' },
      { from: 'ask', to: 'done', if: { var: 'city', op: 'exists' } },
    ],
    global: [{ to: 'person', when: 'The caller asks for a person', keywords: ['person'] }],
  };
}

/** The pathway after `change`, validated. */
function check(change: (doc: Doc) => void) {
  const doc = basePathway();
  change(doc);
  return validatePathway(doc);
}

const at = (issues: Array<{ path: string; message: string }>) => issues.map((i) => i.path);

describe('validatePathway: valid documents', () => {
  it('accepts the base pathway and the documented example without errors or warnings', () => {
    expect(validatePathway(basePathway())).toEqual({ errors: [], warnings: [] });
    expect(validatePathway(examplePathway)).toEqual({ errors: [], warnings: [] });
  });

  it('accepts every node type, inline tools, assignments, conditions of each operator', () => {
    const doc: PathwayDocument = {
      name: 'Everything',
      start: 'a',
      variables: {
        n: { type: 'number' },
        ok: { type: 'boolean' },
        day: { type: 'date' },
        tel: { type: 'phone' },
        mail: { type: 'email' },
        plan: { type: 'enum', values: ['basic', 'pro'] },
        note: { type: 'string', description: 'anything' },
      },
      nodes: [
        {
          id: 'a',
          type: 'conversation',
          say: 'It is {{now}}; {{contact.fields.company}} {{contact.phone}}',
          extract: ['n', 'ok', 'day', 'tel', 'mail', 'plan'],
          tools: [
            'book_slot',
            {
              type: 'http',
              name: 'lookup',
              description: 'Look an order up',
              parameters: { type: 'object', properties: { id: { type: 'string' } } } as { type: 'object' },
              url: 'https://example.com/lookup',
              assign: { note: '$.items[0].note' },
              keywords: ['order'],
            },
          ],
        },
        {
          id: 'hook',
          type: 'webhook',
          url: 'http://example.com/hook',
          method: 'GET',
          body: '{"n": {{n}}}',
          assign: { note: '$' },
        },
        { id: 'keys', type: 'digits', send: '1w2#*' },
        { id: 'text', type: 'sms', text: 'Your plan: {{plan}}' },
        { id: 'human', type: 'transfer', humanAgentId: 'contact-1', say: 'One moment' },
        { id: 'bye', type: 'end' },
      ],
      edges: [
        { from: 'a', to: 'hook', if: { var: 'n', op: 'gt', value: 3 } },
        { from: 'a', to: 'keys', if: { var: 'day', op: 'lt', value: '2026-12-01' } },
        { from: 'a', to: 'text', if: { var: 'plan', op: 'in', value: ['basic', 'pro'] } },
        { from: 'a', to: 'human', if: { var: 'ok', op: 'eq', value: true } },
        { from: 'a', to: 'bye', if: { var: 'tel', op: 'ne', value: '+14155550123' } },
        { from: 'a', to: 'bye', when: 'The caller is done', keywords: ['bye', 'that is all'] },
        { from: 'hook', to: 'bye' },
        { from: 'keys', to: 'bye' },
        { from: 'text', to: 'bye' },
      ],
    };
    expect(validatePathway(doc)).toEqual({ errors: [], warnings: [] });
  });
});

describe('validatePathway: errors, each at its path', () => {
  it.each<[string, (doc: Doc) => void, Array<{ path: string; message: RegExp }>]>([
    ['a missing node id', (d) => d.nodes.push({ type: 'end' }), [{ path: '/nodes/4/id', message: /is required/ }]],
    [
      'an empty node id',
      (d) => d.nodes.push({ id: '', type: 'end' }),
      [{ path: '/nodes/4/id', message: /fewer than 1/ }],
    ],
    [
      'a duplicate node id',
      (d) => d.nodes.push({ id: 'ask', type: 'end' }),
      [{ path: '/nodes/4/id', message: /duplicate id "ask" \(first at \/nodes\/1\)/ }],
    ],
    ['an unknown start', (d) => (d.start = 'hello'), [{ path: '/start', message: /no node has id "hello"/ }]],
    [
      'an unknown node type',
      (d) => (d.nodes[3].type = 'voicemail'),
      [{ path: '/nodes/3/type', message: /unknown node type "voicemail"/ }],
    ],
    [
      'an unknown edge start',
      (d) => d.edges.push({ from: 'nowhere', to: 'done' }),
      [{ path: '/edges/2/from', message: /no node has id "nowhere"/ }],
    ],
    [
      'an unknown edge end',
      (d) => d.edges.push({ from: 'ask', to: 'confirm' }),
      [{ path: '/edges/2/to', message: /no node has id "confirm"/ }],
    ],
    [
      'an unknown global edge end',
      (d) => d.global.push({ to: 'desk', keywords: ['desk'] }),
      [{ path: '/global/1/to', message: /no node has id "desk"/ }],
    ],
    [
      'a broken link, and the nodes it leaves unreachable',
      (d) => (d.edges[0].to = 'asc'),
      [
        { path: '/edges/0/to', message: /no node has id "asc"/ },
        { path: '/nodes/1', message: /node "ask" cannot be reached/ },
        { path: '/nodes/2', message: /node "done" cannot be reached/ },
      ],
    ],
    [
      'an if on an undeclared variable',
      (d) => (d.edges[1].if.var = 'town'),
      [{ path: '/edges/1/if/var', message: /undeclared|no declared variable: "town"/ }],
    ],
    [
      'an extract of an undeclared variable',
      (d) => d.nodes[1].extract.push('zip'),
      [{ path: '/nodes/1/extract/1', message: /no declared variable: "zip"/ }],
    ],
    [
      'a say template naming an undeclared variable',
      (d) => (d.nodes[0].say = 'Hi {{ first_name }}'),
      [{ path: '/nodes/0/say', message: /\{\{first_name\}\} names no declared variable/ }],
    ],
    [
      'a prompt template naming an undeclared variable',
      (d) => (d.nodes[1].prompt = 'Ask about {{order}}'),
      [{ path: '/nodes/1/prompt', message: /\{\{order\}\}/ }],
    ],
    [
      'an sms text template naming an undeclared variable',
      (d) =>
        d.nodes.push({ id: 's', type: 'sms', text: 'Code {{code}}' }) &&
        d.edges.push({ from: 'greet', to: 's' }, { from: 's', to: 'done' }),
      [{ path: '/nodes/4/text', message: /\{\{code\}\}/ }],
    ],
    [
      'a webhook body template naming an undeclared variable',
      (d) =>
        d.nodes.push({
          id: 'w',
          type: 'webhook',
          url: 'https://example.com',
          method: 'POST',
          body: '{"x":"{{secret}}"}',
        }) && d.edges.push({ from: 'greet', to: 'w' }, { from: 'w', to: 'done' }),
      [{ path: '/nodes/4/body', message: /\{\{secret\}\}/ }],
    ],
    [
      'a contact name the call does not know',
      (d) => (d.nodes[0].say = 'Hi {{contact.email}}'),
      [{ path: '/nodes/0/say', message: /\{\{contact\.email\}\}/ }],
    ],
    [
      'a webhook assigning an undeclared variable',
      (d) =>
        d.nodes.push({
          id: 'w',
          type: 'webhook',
          url: 'https://example.com',
          method: 'GET',
          assign: { status: '$.status' },
        }) && d.edges.push({ from: 'greet', to: 'w' }, { from: 'w', to: 'done' }),
      [{ path: '/nodes/4/assign/status', message: /no declared variable: "status"/ }],
    ],
    [
      'a node not reachable from start',
      (d) => d.nodes.push({ id: 'orphan', type: 'end' }),
      [{ path: '/nodes/4', message: /node "orphan" cannot be reached from the start node "greet"/ }],
    ],
    [
      'a global edge with neither when nor keywords',
      (d) => d.global.push({ to: 'person' }),
      [{ path: '/global/1', message: /needs `when` or `keywords`/ }],
    ],
    [
      'an if edge that also has when',
      (d) => (d.edges[1].when = 'the city is known'),
      [{ path: '/edges/1/if', message: /decided by the server alone/ }],
    ],
    [
      'an enum without values',
      (d) => delete d.variables.plan.values,
      [{ path: '/variables/plan/values', message: /required for an enum/ }],
    ],
    [
      'values on a variable that is not an enum',
      (d) => (d.variables.city.values = ['Paris']),
      [{ path: '/variables/city/values', message: /only an enum/ }],
    ],
    [
      'a variable name that is not a name',
      (d) => (d.variables['first name'] = { type: 'string' }),
      [{ path: '/variables/first name', message: /letters, digits and _/ }],
    ],
    [
      'a reserved variable name',
      (d) => (d.variables.now = { type: 'date' }),
      [{ path: '/variables/now', message: /filled by the call itself/ }],
    ],
    [
      'gt on a string variable',
      (d) => (d.edges[1].if = { var: 'city', op: 'gt', value: 3 }),
      [{ path: '/edges/1/if/op', message: /compares numbers or dates/ }],
    ],
    [
      'eq without a value',
      (d) => (d.edges[1].if = { var: 'city', op: 'eq' }),
      [{ path: '/edges/1/if/value', message: /is required for `eq`/ }],
    ],
    [
      'in without a list',
      (d) => (d.edges[1].if = { var: 'plan', op: 'in', value: 'pro' }),
      [{ path: '/edges/1/if/value', message: /takes a list/ }],
    ],
    [
      'an enum value that is not one of its values',
      (d) => (d.edges[1].if = { var: 'plan', op: 'in', value: ['pro', 'gold'] }),
      [{ path: '/edges/1/if/value/1', message: /must be one of "basic", "pro"/ }],
    ],
    [
      'a number compared with a string',
      (d) => (d.edges[1].if = { var: 'age', op: 'lt', value: 'ten' }),
      [{ path: '/edges/1/if/value', message: /must be a number/ }],
    ],
    [
      'a duplicate inline tool',
      (d) => (d.nodes[1].tools = ['lookup', 'lookup']),
      [{ path: '/nodes/1/tools/1', message: /already listed at \/nodes\/1\/tools\/0/ }],
    ],
    [
      'an inline tool missing its description, with a bad URL',
      (d) =>
        (d.nodes[1].tools = [
          { type: 'http', name: 'lookup', parameters: { type: 'object' }, url: 'file:///etc/passwd' },
        ]),
      [
        { path: '/nodes/1/tools/0/description', message: /is required/ },
        { path: '/nodes/1/tools/0/url', message: /http or https/ },
      ],
    ],
    [
      'a tool that is neither a name nor an object',
      (d) => (d.nodes[1].tools = [42]),
      [{ path: '/nodes/1/tools/0', message: /must be string or object/ }],
    ],
    [
      'a bad JSON path to assign',
      (d) =>
        d.nodes.push({
          id: 'w',
          type: 'webhook',
          url: 'https://example.com',
          method: 'GET',
          assign: { city: 'status' },
        }) && d.edges.push({ from: 'greet', to: 'w' }, { from: 'w', to: 'done' }),
      [{ path: '/nodes/4/assign/city', message: /must start with \$/ }],
    ],
    [
      'an inline tool header that cannot be sent',
      (d) =>
        (d.nodes[1].tools = [
          {
            type: 'http',
            name: 'lookup',
            description: 'Look up',
            parameters: { type: 'object' },
            url: 'https://example.com',
            headers: { 'Content-Type': 'text/plain', 'X-Key': 'a\r\nb' },
          },
        ]),
      [
        { path: '/nodes/1/tools/0/headers/Content-Type', message: /set by the server/ },
        { path: '/nodes/1/tools/0/headers/X-Key', message: /control characters/ },
      ],
    ],
    [
      'a templated webhook URL',
      (d) =>
        d.nodes.push({ id: 'w', type: 'webhook', url: 'https://example.com/{{city}}', method: 'GET' }) &&
        d.edges.push({ from: 'greet', to: 'w' }, { from: 'w', to: 'done' }),
      [{ path: '/nodes/4/url', message: /not a template/ }],
    ],
  ])('%s', (_name, change, expected) => {
    const { errors } = check(change);
    expect(errors.map((e) => e.path)).toEqual(expected.map((e) => e.path));
    expected.forEach((e, i) => expect(errors[i]!.message).toMatch(e.message));
  });

  it('reports schema violations with their paths: wrong types, missing and unknown fields, bad enums and patterns', () => {
    const { errors } = check((d) => {
      d.name = 7;
      d.colour = 'blue';
      d.nodes[0].say = ['hi'];
      d.nodes[1].extract = 'city';
      d.nodes[2].sayy = 'typo';
      d.nodes.push(
        { id: 'keys', type: 'digits', send: '12x' },
        { id: 'hook', type: 'webhook', url: 'https://example.com', method: 'PUT' },
        { id: 'msg', type: 'sms' },
      );
      d.edges[0].keywords = 'yes';
      d.edges[1].if.op = 'contains';
      d.variables.age.type = 'integer';
    });
    const byPath = Object.fromEntries(errors.map((e) => [e.path, e.message]));
    expect(byPath).toMatchObject({
      '/name': 'must be string',
      '/colour': 'is not a field here',
      '/nodes/0/say': 'must be string',
      '/nodes/1/extract': 'must be array',
      '/nodes/2/sayy': 'is not a field here',
      '/nodes/4/send': expect.stringMatching(/must match/),
      '/nodes/5/method': 'must be one of "POST", "GET"',
      '/nodes/6/text': 'is required',
      '/edges/0/keywords': 'must be array',
      '/edges/1/if/op': expect.stringMatching(/must be one of "eq"/),
      '/variables/age/type': expect.stringMatching(/must be one of "string"/),
    });
  });

  it('says a document that is not an object is not a pathway, and a node that is not an object is not a node', () => {
    expect(validatePathway([1, 2]).errors).toEqual([{ path: '', message: 'a pathway is a JSON object' }]);
    expect(validatePathway('graph').errors).toEqual([{ path: '', message: 'a pathway is a JSON object' }]);
    expect(at(check((d) => d.nodes.push('end')).errors)).toEqual(['/nodes/4']);
    expect(at(validatePathway({}).errors)).toEqual(['/name', '/start', '/nodes', '/edges']);
  });

  it('refuses more than 200 nodes or 1,000 edges, and checks nothing else then', () => {
    const nodes = Array.from({ length: 201 }, (_, i) => ({ id: `n${i}`, type: 'end' }));
    expect(validatePathway({ name: 'big', start: 'n0', nodes, edges: [] }).errors).toEqual([
      { path: '/nodes', message: 'has 201 items: at most 200' },
    ]);
    const edges = Array.from({ length: 1001 }, () => ({ from: 'a', to: 'b' }));
    expect(validatePathway({ name: 'big', start: 'nowhere', nodes: [{ id: 'a', type: 'end' }], edges }).errors).toEqual(
      [{ path: '/edges', message: 'has 1001 items: at most 1000' }],
    );
    // 200 nodes and 1,000 edges are fine.
    const chain = Array.from({ length: 200 }, (_, i) => ({ id: `n${i}`, type: i === 199 ? 'end' : 'conversation' }));
    const links = Array.from({ length: 1000 }, (_, i) => ({
      from: `n${Math.min(i, 198)}`,
      to: `n${Math.min(i + 1, 199)}`,
    }));
    expect(validatePathway({ name: 'big', start: 'n0', nodes: chain, edges: links })).toEqual({
      errors: [],
      warnings: [],
    });
  });

  it("reports inline tool parameters that do not compile, through the custom tools' check", async () => {
    const { ParameterSchemas } = await import('../../../src/modules/custom-tools/parameters.js');
    const schemas = new ParameterSchemas();
    const doc = basePathway();
    doc.nodes[1].tools = [
      {
        type: 'http',
        name: 'lookup',
        description: 'Look up',
        parameters: { type: 'object', properties: { id: { type: 'strin' } } },
        url: 'https://example.com',
      },
    ];
    expect(validatePathway(doc).errors).toEqual([]);
    const { errors } = validatePathway(doc, { parametersProblem: (schema) => schemas.problem(schema) });
    expect(errors).toEqual([
      { path: '/nodes/1/tools/0/parameters', message: expect.stringMatching(/does not compile/) },
    ]);
  });

  it('escapes ~ and / in paths made of names (JSON pointer)', () => {
    const { errors } = check((d) => (d.variables['a/b~c'] = { type: 'string' }));
    expect(at(errors)).toEqual(['/variables/a~1b~0c']);
  });
});

describe('validatePathway: warnings', () => {
  it('warns of a `when` edge without keywords, local or global', () => {
    const { errors, warnings } = check((d) => {
      d.edges[0].when = 'The caller said hello';
      delete d.global[0].keywords;
    });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      {
        path: '/edges/0/keywords',
        message: 'a `when` edge without keywords: the sandbox dialogue engine cannot take it',
      },
      {
        path: '/global/0/keywords',
        message: 'a `when` edge without keywords: the sandbox dialogue engine cannot take it',
      },
    ]);
  });

  it('warns of a node from which no end or transfer can be reached', () => {
    const { errors, warnings } = check((d) => {
      d.nodes.push({ id: 'loop', type: 'webhook', url: 'https://example.com', method: 'POST' });
      d.edges.push({ from: 'greet', to: 'loop' }, { from: 'loop', to: 'loop' });
    });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      { path: '/nodes/4', message: 'no end or transfer node can be reached from node "loop"' },
    ]);
  });

  it('counts global edges as leaving every conversation node, both for reaching nodes and for reaching an end', () => {
    // `ask` has no edge out: only the global edge to the transfer lets it finish; `person` is reached only through it.
    const result = check((d) => {
      d.edges = [{ from: 'greet', to: 'ask' }];
      d.nodes.splice(2, 1);
      d.nodes[0].say = 'Hello';
    });
    expect(result).toEqual({ errors: [], warnings: [] });
    const withoutGlobal = check((d) => {
      d.edges = [{ from: 'greet', to: 'ask' }];
      d.nodes.splice(2, 1);
      d.nodes[0].say = 'Hello';
      delete d.global;
    });
    expect(at(withoutGlobal.errors)).toEqual(['/nodes/2']);
    expect(at(withoutGlobal.warnings)).toEqual(['/nodes/0', '/nodes/1']);
  });
});
