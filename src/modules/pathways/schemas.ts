// The pathway document of DESIGN.md "Conversational pathways", as TypeBox
// schemas: its static types, the OpenAPI body, and (node by node) the shape
// check of the validator.
import { type Static, type TSchema, Type } from 'typebox';
import { HttpToolDeclaration } from '../custom-tools/declaration.js';

export const MAX_NODES = 200;
export const MAX_EDGES = 1000;

export const VARIABLE_TYPES = ['string', 'number', 'boolean', 'date', 'phone', 'email', 'enum'] as const;
export const NODE_TYPES = ['conversation', 'webhook', 'transfer', 'digits', 'sms', 'end'] as const;
export const CONDITION_OPS = ['eq', 'ne', 'gt', 'lt', 'exists', 'in'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });
const Template = (maxLength: number, description: string) =>
  Type.String({
    maxLength,
    description: `${description}; \`{{variable}}\`, \`{{contact.name}}\`, \`{{contact.fields.X}}\` and \`{{now}}\` are filled in`,
  });
const Say = Template(2000, 'Spoken as written');
const TOOL_NAME = '^[a-z0-9_]{1,64}$';

/** `{ var: "$.json.path" }`: fields of a JSON answer copied into the call's variables (the custom tools' JSONPath subset). */
const Assignments = Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 256 }), {
  maxProperties: 50,
  description:
    'Variables set from the JSON answer: `{ "<variable>": "$.json.path" }` (`$`, `.field`, `[index]`, `["key"]`)',
});

export const Variable = Type.Object(
  {
    type: Type.Enum(VARIABLE_TYPES),
    description: Type.Optional(Type.String({ maxLength: 500, description: 'What it holds, for the model' })),
    values: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: 100,
        description: 'enum: the values it may take',
      }),
    ),
  },
  { additionalProperties: false },
);

const node = <T extends NodeType, P extends Record<string, TSchema>>(type: T, description: string, properties: P) =>
  Type.Object(
    { id: Id('Unique in the pathway'), type: Type.Literal(type), ...properties },
    { additionalProperties: false, description },
  );

export const ConversationNode = node(
  'conversation',
  'The agent talks: says `say`, follows `prompt`, collects `extract`',
  {
    say: Type.Optional(Say),
    prompt: Type.Optional(Template(8000, 'What the agent does here')),
    extract: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 50,
        description: 'Variables to collect here',
      }),
    ),
    tools: Type.Optional(
      Type.Array(
        Type.Union([
          Type.String({ pattern: TOOL_NAME, description: "A tool of the agent's or the call's, by name" }),
          HttpToolDeclaration,
        ]),
        { maxItems: 20, description: 'Tools usable here: names, or tools declared inline' },
      ),
    ),
  },
);
export const WebhookNode = node(
  'webhook',
  'An HTTP request signed with Standard Webhooks (5 s, the webhook address filter); no speech',
  {
    url: Type.String({ minLength: 1, maxLength: 2000, description: 'An http or https URL (not a template)' }),
    method: Type.Enum(['POST', 'GET']),
    body: Type.Optional(Template(16000, 'The request body')),
    assign: Type.Optional(Assignments),
  },
);
export const TransferNode = node('transfer', 'Hands the call to a person', {
  humanAgentId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'A human agent (a contacts record); default the first' }),
  ),
  say: Type.Optional(Say),
});
export const DigitsNode = node('digits', "Sends DTMF digits to the other party (another party's phone menu)", {
  send: Type.String({ pattern: '^[0-9*#w]{1,100}$', description: 'Digits, `*`, `#`; `w` a half-second pause' }),
});
export const SmsNode = node('sms', 'Texts the contact (charged as any SMS)', { text: Template(1600, 'The message') });
export const EndNode = node('end', 'Says `say`, then hangs up', { say: Type.Optional(Say) });

/** Each node type's schema, for the validator (which checks a node against its type's schema only). */
export const NODE_SCHEMAS: Record<NodeType, TSchema> = {
  conversation: ConversationNode,
  webhook: WebhookNode,
  transfer: TransferNode,
  digits: DigitsNode,
  sms: SmsNode,
  end: EndNode,
};

export const PathwayNode = Type.Union([ConversationNode, WebhookNode, TransferNode, DigitsNode, SmsNode, EndNode]);
export type PathwayNode = Static<typeof PathwayNode>;
export type ConversationNode = Static<typeof ConversationNode>;

const When = Type.String({
  minLength: 1,
  maxLength: 500,
  description: 'A condition in words the model decides (offered through `choose_path`)',
});
const Keywords = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description:
    "Words or short phrases the sandbox dialogue engine matches in the caller's turn (case-insensitive, whole words)",
});

export const Condition = Type.Object(
  {
    var: Type.String({ minLength: 1, maxLength: 64, description: 'A declared variable' }),
    op: Type.Enum(CONDITION_OPS),
    value: Type.Optional(
      Type.Union(
        [
          Type.String({ maxLength: 500 }),
          Type.Number(),
          Type.Boolean(),
          Type.Array(Type.Union([Type.String({ maxLength: 500 }), Type.Number()]), { maxItems: 100 }),
        ],
        {
          description: 'eq, ne: a value; gt, lt: a number (a date: YYYY-MM-DD); in: a list; exists: none',
        },
      ),
    ),
  },
  { additionalProperties: false, description: 'A condition on variables the server decides, without the model' },
);
export type Condition = Static<typeof Condition>;

export const PathwayEdge = Type.Object(
  {
    from: Id('A node id'),
    to: Id('A node id'),
    when: Type.Optional(When),
    keywords: Type.Optional(Keywords),
    if: Type.Optional(Condition),
  },
  {
    additionalProperties: false,
    description: 'With none of when, keywords and if: taken when its node has finished, or as the fallback',
  },
);
export type PathwayEdge = Static<typeof PathwayEdge>;

export const GlobalEdge = Type.Object(
  { to: Id('A node id'), when: Type.Optional(When), keywords: Type.Optional(Keywords) },
  {
    additionalProperties: false,
    description: 'May be taken from any conversation node (a caller asking for a person, an opt-out)',
  },
);
export type GlobalEdge = Static<typeof GlobalEdge>;

const documentFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  start: Id('The id of the first node'),
  variables: Type.Optional(
    Type.Record(Type.String(), Variable, {
      maxProperties: 100,
      description: 'By name (letters, digits and _, not `contact` or `now`)',
    }),
  ),
};

export const PathwayDocument = Type.Object(
  {
    ...documentFields,
    nodes: Type.Array(PathwayNode, { minItems: 1, maxItems: MAX_NODES }),
    edges: Type.Array(PathwayEdge, { maxItems: MAX_EDGES }),
    global: Type.Optional(Type.Array(GlobalEdge, { maxItems: MAX_EDGES })),
  },
  {
    additionalProperties: false,
    title: 'PathwayDocument',
    description: 'A conversational pathway: a graph the agent walks during a call',
  },
);
export type PathwayDocument = Static<typeof PathwayDocument>;

/** The document with its nodes left open: the validator checks each node against its own type's schema. */
export const PathwayShell = Type.Object(
  {
    ...documentFields,
    nodes: Type.Array(Type.Unknown(), { minItems: 1 }),
    edges: Type.Array(PathwayEdge),
    global: Type.Optional(Type.Array(GlobalEdge)),
  },
  { additionalProperties: false },
);

/** One error or warning: where in the document (a JSON pointer) and what. */
export const PathwayIssue = Type.Object({
  path: Type.String({
    description: 'A JSON pointer into the document, e.g. `/nodes/3/id`; `` for the document itself',
  }),
  message: Type.String(),
});
export type PathwayIssue = Static<typeof PathwayIssue>;
