// Example values for the data plane's OpenAPI document.
import type { Static } from 'typebox';
import type { CurrentServer, KeyResponse, ObjectResponse, RootResponse } from './schemas.js';

const ID = '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f40';
const KEY_ID = '01936b2e-9a10-7b22-8c3d-4e5f60718293';
const AT = '2026-11-23T12:00:00.000Z';
const SPKI = 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE3ZRb0a4nL0SmgxmCX0vT3Wq0mQJ5c6R0Ywq8Uq2Dgk4';

export const exampleServer: Static<typeof CurrentServer> = {
  current: 'workspace-1',
  keys: {
    spki: SPKI,
    jwk: {
      kty: 'EC',
      crv: 'P-256',
      x: '3ZRb0a4nL0SmgxmCX0vT3Wq0mQJ5c6R0Ywq8Uq2Dgk4',
      y: 'kY8Cq4b8m2l0eA7yS0o6J5pX9rT1uW3vZ2nD4fG6hJ8',
      kid: 'workspace-1',
      use: 'enc',
      alg: 'ECDH-ES+A256KW',
    },
  },
};

const store = (n: number) => ({
  id: `01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f4${n}`,
  keyId: `01936b2e-9a10-7b22-8c3d-4e5f6071829${n}`,
});

export const exampleRoot: Static<typeof RootResponse> = {
  id: ID,
  stores: {
    contacts: store(1),
    calls: store(2),
    agents: store(3),
    tasks: store(4),
    'conversational-pathways': store(5),
    campaigns: store(6),
    'sms-messages': store(7),
    'performance-metrics': store(8),
  },
  server: exampleServer,
  createdAt: AT,
};

export const exampleKey: Static<typeof KeyResponse> = {
  id: KEY_ID,
  server: 'workspace-1',
  key: '3c1f0a9e8b7d6c5f4e3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e',
  iv: '0a1b2c3d4e5f60718293a4b5',
  created_at: AT,
  deprecated: false,
};

export const exampleObject: Static<typeof ObjectResponse> = {
  id: ID,
  keyId: KEY_ID,
  relatedId: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f42',
  content: '8f2a61c0d3',
  auth_tag: '5d41402abc4b2a76b9719d911017c592',
  iv: '0a1b2c3d4e5f60718293a4b5',
  version: 1,
  metadata: { size: 5, kind: 'object' },
  createdAt: AT,
  updatedAt: AT,
};

export const exampleObjectBody = {
  keyId: KEY_ID,
  content: 'jyphwNM=',
  authTag: 'XUFAKrxLKna5cZ2REBfFkg==',
  iv: 'ChssPU5fYHGCk6S1',
  relatedId: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f42',
};

export const exampleIds = { ID, KEY_ID, AT, SPKI };
