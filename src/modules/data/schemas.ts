// Request and response schemas of the data plane (spec 2.5–2.9, 4.7, 4.8).
import { Type } from 'typebox';

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Timestamp = Type.String({ format: 'date-time' });
const Hex = (description: string) => Type.String({ pattern: '^[0-9a-f]*$', description });

// ---- server and root -------------------------------------------------------

export const ServicePublicKeys = Type.Object({
  spki: Type.String({ description: 'base64url DER SubjectPublicKeyInfo (P-256)' }),
  jwk: Type.Object(
    {
      kty: Type.String(),
      crv: Type.String(),
      x: Type.String(),
      y: Type.String(),
      kid: Type.String({ description: 'The server name' }),
      use: Type.String(),
      alg: Type.String(),
    },
    { description: 'The same public key as a JWK, for JWE ECDH-ES+A256KW' },
  ),
});

export const CurrentServer = Type.Object({
  current: Type.String({ description: "The service's active server name" }),
  keys: ServicePublicKeys,
});

const StoreRef = Type.Object({
  id: Type.String({ description: 'The store container object' }),
  keyId: Type.String({ description: 'The store default key' }),
});

export const RootResponse = Type.Object({
  id: Type.String({ description: 'The root container object' }),
  stores: Type.Object({
    contacts: StoreRef,
    calls: StoreRef,
    agents: StoreRef,
    tasks: StoreRef,
    'conversational-pathways': StoreRef,
    campaigns: StoreRef,
    'sms-messages': StoreRef,
    'performance-metrics': StoreRef,
  }),
  server: CurrentServer,
  createdAt: Timestamp,
});

// ---- registered servers ----------------------------------------------------

export const ServerEntry = Type.Object({
  name: Type.String(),
  publicKey: Type.String({ description: 'base64url SPKI' }),
  createdAt: Timestamp,
});

export const RegisterServerBody = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Unique among your servers; letters, digits, ".", "-", "_"',
  }),
  mode: Type.Union([Type.Literal('generate'), Type.Literal('upload_public')]),
  publicKey: Type.Optional(
    Type.String({
      maxLength: 4096,
      description: 'base64url DER SPKI of a P-256 key; required with upload_public, ignored with generate',
    }),
  ),
});

export const RegisteredServer = Type.Object({
  name: Type.String(),
  publicKey: Type.String({ description: 'base64url SPKI' }),
  privateKey: Type.Optional(
    Type.String({ description: 'base64url PKCS#8; mode generate only, returned once and never stored' }),
  ),
  createdAt: Timestamp,
});

// ---- store keys ------------------------------------------------------------

export const CreateKeyBody = Type.Object({
  server: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'A registered server name or the service current server',
  }),
  key: Type.Optional(Type.String({ maxLength: 64, description: 'base64, 32 bytes (AES-256); random when omitted' })),
  iv: Type.Optional(
    Type.String({
      maxLength: 32,
      description: 'base64, 12 bytes; random when omitted. Kept for compatibility: use a fresh per-object iv',
    }),
  ),
});

export const KeyResponse = Type.Object({
  id: Type.String(),
  server: Type.String(),
  key: Hex('AES key'),
  iv: Hex('Key IV (compatibility only)'),
  created_at: Timestamp,
  deprecated: Type.Boolean(),
});

// ---- objects ---------------------------------------------------------------

export const ObjectBody = Type.Object({
  keyId: Id,
  content: Type.String({ description: 'base64 ciphertext' }),
  authTag: Type.String({ maxLength: 64, description: 'base64 AES-GCM tag, 16 bytes' }),
  iv: Type.Optional(
    Type.Union([Type.String({ maxLength: 32 }), Type.Null()], {
      description: 'base64 12-byte nonce of this ciphertext',
    }),
  ),
  relatedId: Type.Optional(
    Type.Union([Id, Type.Null()], { description: 'Parent object. On PATCH: omitted keeps the parent, null detaches' }),
  ),
});

export const ObjectResponse = Type.Object({
  id: Type.String(),
  keyId: Type.Union([Type.String(), Type.Null()], { description: 'null only on the root container' }),
  relatedId: Type.Union([Type.String(), Type.Null()]),
  content: Hex('Ciphertext'),
  auth_tag: Hex('GCM tag'),
  iv: Type.Union([Hex('Nonce'), Type.Null()]),
  version: Type.Integer({ minimum: 1, description: 'Also sent as the ETag; PATCH accepts If-Match' }),
  metadata: Type.Object({
    size: Type.Integer({ description: 'Ciphertext bytes' }),
    kind: Type.Union([Type.Literal('root'), Type.Literal('store'), Type.Literal('object')]),
    store: Type.Optional(Type.String({ description: 'Store name, on store containers' })),
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ maxLength: 200, description: 'The version you read: "3" (or 3). A stale version answers 412' }),
  ),
});

export const RelatedQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      description: 'At most this many children (default 1000); a page may end earlier to stay within the byte budget',
    }),
  ),
  after: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Id of the last child of the previous page' }),
  ),
});

// ---- publish ---------------------------------------------------------------

export const PublishParams = Type.Object({
  type: Type.String({ pattern: '^[a-z0-9_-]{1,64}$', description: 'Logical type, e.g. calls, contacts' }),
  relatedId: Type.String({ minLength: 1, maxLength: 200 }),
});

export const PublishBody = Type.Object({ objectId: Id });

export const PublicationResponse = Type.Object({
  type: Type.String(),
  relatedId: Type.String(),
  objectId: Type.String(),
  publishedAt: Timestamp,
});
