// Declaring custom HTTP tools: the parser's 400s name the path at fault,
// defaults are filled, parameters must compile, header values are sealed and
// masked, and the JSONPath subset of `assign`.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/http/errors.js';
import { createSecretBox } from '../../../src/lib/secret-box.js';
import { parseHttpTool, parseHttpTools } from '../../../src/modules/custom-tools/declaration.js';
import { maskHeaders, openHeaders, sealHeaders } from '../../../src/modules/custom-tools/headers.js';
import { parseJsonPath, readJsonPath } from '../../../src/modules/custom-tools/json-path.js';
import { ParameterSchemas } from '../../../src/modules/custom-tools/parameters.js';
import { buildToolRequest } from '../../../src/modules/custom-tools/request.js';

const schemas = new ParameterSchemas();

const tool = (overrides: Record<string, unknown> = {}) => ({
  type: 'http',
  name: 'check_order',
  description: 'Looks an order up by its number',
  parameters: {
    type: 'object',
    properties: { order: { type: 'string', pattern: '^[0-9]{4,8}$' } },
    required: ['order'],
    additionalProperties: false,
  },
  url: 'https://api.example.com/orders',
  ...overrides,
});

/** The message of the 400 the parser throws. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('invalid_input');
    return (err as AppError).message;
  }
  throw new Error('expected a 400');
}

describe('parseHttpTool', () => {
  it('fills the defaults: POST, 5000 ms, no headers, no assign, no keywords', () => {
    expect(parseHttpTool(tool(), 'tools[0]', schemas)).toEqual({
      ...tool(),
      method: 'POST',
      headers: {},
      timeoutMs: 5000,
      assign: {},
      keywords: [],
    });
    const full = parseHttpTool(
      tool({
        method: 'GET',
        timeoutMs: 20_000,
        speak: 'One moment.',
        assign: { status: '$.order.status' },
        keywords: ['order'],
        headers: { Authorization: 'Bearer x' },
      }),
      'tools[0]',
      schemas,
    );
    expect(full).toMatchObject({
      method: 'GET',
      timeoutMs: 20_000,
      speak: 'One moment.',
      assign: { status: '$.order.status' },
      keywords: ['order'],
    });
  });

  it.each([
    [{ name: 'Check-Order' }, 'tools[2].name must be 1 to 64 of a-z, 0-9 and _'],
    [{ type: 'function' }, 'tools[2].type must be "http"'],
    [{ method: 'PUT' }, 'tools[2].method must be one of POST, GET'],
    [{ timeoutMs: 20_001 }, 'tools[2].timeoutMs must be <= 20000'],
    [{ timeoutMs: 1.5 }, 'tools[2].timeoutMs must be integer'],
    [{ description: '' }, 'tools[2].description must not have fewer than 1 characters'],
    [{ timeout: 3000 }, 'tools[2] has an unknown field "timeout"'],
    [{ keywords: ['ok', ''] }, 'tools[2].keywords[1] must not have fewer than 1 characters'],
    [{ parameters: { type: 'string' } }, 'tools[2].parameters.type must be "object"'],
    [
      { parameters: { type: 'object', properties: { n: { type: 'integr' } } } },
      'tools[2].parameters does not compile: ',
    ],
    [
      { parameters: { type: 'object', properties: { n: { $ref: 'https://evil.example/s.json' } } } },
      'tools[2].parameters does not compile: ',
    ],
    [{ parameters: { type: 'object', $id: 'https://example.com/x' } }, 'tools[2].parameters must not use $id'],
    [
      { parameters: { type: 'object', properties: { _call: { type: 'string' } } } },
      'tools[2].parameters must not declare `_call`',
    ],
    [{ headers: { 'Bad Name': 'x' } }, 'tools[2].headers["Bad Name"] is not a valid header name'],
    [{ headers: { 'Webhook-Signature': 'x' } }, 'tools[2].headers["Webhook-Signature"] is set by the server'],
    [{ headers: { 'X-Key': 'a\r\nInjected: 1' } }, 'tools[2].headers["X-Key"] must not contain control characters'],
    [{ headers: { 'x-key': 'a', 'X-Key': 'b' } }, 'tools[2].headers["X-Key"] is given twice'],
    [{ assign: { '1st': '$.a' } }, 'tools[2].assign["1st"] is not a variable name'],
    [{ assign: { total: 'order.total' } }, 'tools[2].assign.total must start with $'],
    [{ assign: { total: '$.items[*].price' } }, 'tools[2].assign.total is not in the supported subset'],
  ])('refuses %j with a message naming the path', (overrides, message) => {
    expect(refusal(() => parseHttpTool(tool(overrides), 'tools[2]', schemas))).toContain(message);
  });

  it('names a missing field', () => {
    const { url: _url, ...withoutUrl } = tool();
    expect(refusal(() => parseHttpTool(withoutUrl, 'nodes[1].tools[0]', schemas))).toBe(
      'nodes[1].tools[0] is missing url',
    );
  });

  it('keeps a list to unique names, none of the call built-in tools', () => {
    expect(parseHttpTools([tool(), tool({ name: 'book' })], 'tools', schemas).map((t) => t.name)).toEqual([
      'check_order',
      'book',
    ]);
    expect(refusal(() => parseHttpTools([tool(), tool()], 'tools', schemas))).toContain(
      'tools[1].name "check_order" is already the name of another tool',
    );
    expect(refusal(() => parseHttpTools([tool({ name: 'end_call' })], 'tools', schemas, ['end_call']))).toContain(
      'tools[0].name "end_call"',
    );
    expect(refusal(() => parseHttpTools({}, 'tools', schemas))).toBe('tools must be an array of tools');
  });
});

describe('ParameterSchemas', () => {
  it('validates arguments and names the path of the first problem', () => {
    const parameters = tool().parameters;
    expect(schemas.argumentProblem(parameters, { order: '1234' })).toBeNull();
    expect(schemas.argumentProblem(parameters, { order: 'abc' })).toBe('/order must match pattern "^[0-9]{4,8}$"');
    expect(schemas.argumentProblem(parameters, {})).toBe("/ must have required property 'order'");
    expect(
      schemas.argumentProblem(
        { type: 'object', properties: { day: { type: 'string', format: 'date' } } },
        { day: 'Monday' },
      ),
    ).toBe('/day must match format "date"');
  });

  it('keeps a bounded number of compiled schemas', () => {
    const own = new ParameterSchemas();
    for (let n = 0; n < 300; n++)
      expect(own.argumentProblem({ type: 'object', properties: { [`p${n}`]: { type: 'number' } } }, {})).toBeNull();
    const cached = (own as unknown as { validators: Map<string, unknown> }).validators;
    expect(cached.size).toBe(256);
  });
});

describe('header values', () => {
  const box = createSecretBox(randomBytes(32));

  it('are sealed, masked as **** and opened only for the request', () => {
    const sealed = sealHeaders(box, { Authorization: 'Bearer sk_live_123', 'X-Team': 'blue' });
    expect(JSON.stringify(sealed)).not.toContain('sk_live_123');
    expect(maskHeaders(sealed)).toEqual({ Authorization: '****', 'X-Team': '****' });
    expect(maskHeaders({ Authorization: 'Bearer sk_live_123' })).toEqual({ Authorization: '****' });
    expect(openHeaders(box, sealed)).toEqual({ Authorization: 'Bearer sk_live_123', 'X-Team': 'blue' });
  });
});

describe('the JSONPath subset', () => {
  const answer = { booking: { slots: [{ start: '2026-12-01T10:00:00Z' }], 'odd key': 7, nothing: null } };

  it.each([
    ['$', answer],
    ['$.booking.slots[0].start', '2026-12-01T10:00:00Z'],
    ['$.booking["odd key"]', 7],
    ["$.booking['odd key']", 7],
    ['$.booking.nothing', null],
    ['$.booking.slots[1].start', undefined],
    ['$.booking.slots.length', undefined],
    ['$.booking.toString', undefined],
  ])('reads %s', (path, expected) => {
    const steps = parseJsonPath(path);
    expect(Array.isArray(steps)).toBe(true);
    expect(readJsonPath(answer, steps as never)).toEqual(expected);
  });

  it.each(['booking.id', '$..id', '$.a[?(@.x)]', '$.a[-1]', '$.', '$["unterminated]'])('refuses %s', (path) => {
    expect(typeof parseJsonPath(path)).toBe('string');
  });
});

describe('the request', () => {
  const call = { session_id: 's1', direction: 'outbound' as const, from: '+15550001111', to: '+15550002222' };

  it('POST: the arguments with _call beside them, the body signed', () => {
    const request = buildToolRequest({ url: 'https://api.example.com/x', method: 'POST' }, { order: '1234' }, call, {
      name: 'Ada',
    });
    expect(JSON.parse(request.body!)).toEqual({ order: '1234', _call: { call, variables: { name: 'Ada' } } });
    expect(request.signedPayload).toBe(request.body);
  });

  it('GET: the arguments as query parameters beside the URL own, _call one JSON parameter, which is what is signed', () => {
    const args = { order: '1234', count: 2, express: true, tags: ['a', 'b'] };
    const request = buildToolRequest({ url: 'https://api.example.com/x?v=2', method: 'GET' }, args, call, {});
    const query = new URL(request.url).searchParams;
    expect(Object.fromEntries(query)).toMatchObject({
      v: '2',
      order: '1234',
      count: '2',
      express: 'true',
      tags: '["a","b"]',
    });
    expect(JSON.parse(query.get('_call')!)).toEqual({ call, variables: {}, arguments: args });
    expect(request.signedPayload).toBe(query.get('_call'));
    expect(request.body).toBeNull();
  });
});
