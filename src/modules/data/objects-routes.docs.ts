// What the OpenAPI document says of the routes in objects-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { exampleObject, exampleObjectBody } from './examples.js';

export const docs = describeRoutes({
  createObject: {
    summary: 'Store an encrypted object (base64 in); answers it hex-encoded, with its version as ETag',
    description:
      '400 invalid base64, wrong tag or iv length; 400 invalid_key when keyId is not one of your keys; 404 unknown relatedId; 413 content over the limit.',
  },
  getObject: {
    summary: 'An object: content, auth_tag and iv hex-encoded',
    description:
      "Only your own objects; another user's object answers 404 like a missing one. The version is also the ETag.",
  },
  updateObject: {
    summary: 'Replace the ciphertext in place; with If-Match only if the object is still at that version',
    description:
      '412 version_mismatch when If-Match names a stale version; 409 for the root and store containers; 400 when relatedId would create a cycle.',
  },
  deleteObject: {
    summary: 'Delete an object and its publications; its children are detached (relatedId cleared), not deleted',
    description: '409 for the root and store containers.',
  },
  listRelatedObjects: {
    summary: 'The children of an object (relatedId = id), oldest first, hex-encoded like GET',
    description:
      'Pages with `limit` and `after` (the id of the last child of the previous page). A page holds at most `limit` children (1000 when omitted) and ends early rather than grow past about RELATED_PAGE_BYTES (16 MiB of JSON; hex doubles the ciphertext), though it always holds at least one child. ' +
      'When more children may follow, the answer carries `X-Next-After` (the `after` of the next page) and a `Link: <…>; rel="next"` header; without them the listing is complete. Keep asking with `after` until they are absent.',
  },
});

export const examples = {
  object: exampleObject,
  objectBody: exampleObjectBody,
  updateObject: { ...exampleObject, version: 2 },
  listRelatedObjects: [exampleObject],
};
