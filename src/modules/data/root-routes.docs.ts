// What the OpenAPI document says of the routes in root-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { exampleIds, exampleRoot, exampleServer } from './examples.js';

export const docs = describeRoutes({
  getRoot: {
    summary: 'The root object: the eight stores with their default keys and the current server; created on first call',
    description:
      "The first call creates the root container, one container object per store and each store's default key; later calls answer the same ids.",
  },
  getCurrentServer: {
    summary: "The service's current server name and public key (SPKI and JWK)",
    description:
      'Encrypt store keys to this public key (ECDH-ES+A256KW) so the service can use them; the name changes when the service rotates its key.',
  },
  listServers: {
    summary: 'Your registered servers',
    description: 'The servers you registered with POST /api/servers, oldest first; private keys are never stored.',
  },
  registerServer: {
    summary: 'Register a server: generate a P-256 key pair (private key returned once) or upload a P-256 public key',
    description:
      '400 for invalid input (bad name, missing or non-P-256 publicKey); 409 conflict when you already have a server of that name.',
  },
});

export const examples = {
  getRoot: exampleRoot,
  getCurrentServer: exampleServer,
  listServers: [{ name: 'backend-1', publicKey: exampleIds.SPKI, createdAt: exampleIds.AT }],
  registerServer: {
    name: 'backend-1',
    publicKey: exampleIds.SPKI,
    privateKey: 'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg',
    createdAt: exampleIds.AT,
  },
  registerServerBody: { name: 'backend-1', mode: 'generate' },
};
