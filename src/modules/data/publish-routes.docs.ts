// What the OpenAPI document says of the routes in publish-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { exampleIds } from './examples.js';

export const docs = describeRoutes({
  publishObject: {
    summary: 'Publish one of your objects under a type and relatedId (replaces what was published there)',
    description:
      'Records that the object is what `type`/`relatedId` shows (e.g. the agent a call uses); a publish event goes to your event streams.',
  },
  unpublishObject: {
    summary: 'Unpublish; the object and its ciphertext stay',
    description:
      '404 when nothing is published under this type and relatedId; an unpublish event goes to your event streams.',
  },
});

export const examples = {
  publishObject: {
    type: 'agents',
    relatedId: 'agent-7',
    objectId: exampleIds.ID,
    publishedAt: exampleIds.AT,
  },
  publishObjectBody: { objectId: exampleIds.ID },
};
