// What the OpenAPI document says of the routes in inbound-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { INBOUND_ID_EXAMPLE, inboundConfigurationExample, phoneNumberExample } from './schemas.js';

const REFERENCES =
  '`agent` must be an object in your `agents` store, each of `humanAgents` one in `contacts` (duplicates removed), `source` one in `campaigns` or `{ "type": "manual" }` (404 otherwise); `knowledge_base_id` must be one of your knowledge bases.';

export const docs = describeRoutes({
  listInboundConfigurations: {
    summary: 'Your inbound configurations',
    description: 'Oldest first, each with its human agents and attached numbers.',
  },
  createInboundConfiguration: {
    summary: 'Create an inbound configuration',
    description: REFERENCES,
  },
  getInboundConfiguration: {
    summary: 'One inbound configuration',
    description: '404 when it is not yours.',
  },
  replaceInboundConfiguration: {
    summary: 'Replace an inbound configuration',
    description: `Every field as on create; optional fields left out are cleared. ${REFERENCES}`,
  },
  updateInboundConfiguration: {
    summary: 'Change some fields of an inbound configuration',
    description: `Any of name, description, source, humanAgents, knowledge_base_id; the agent changes through PUT. ${REFERENCES}`,
  },
  deleteInboundConfiguration: {
    summary: 'Delete an inbound configuration',
    description:
      'Its numbers are detached first (their voice webhooks cleared); 502 if the provider fails, and the configuration stays.',
  },
  attachPhoneNumber: {
    summary: 'Attach a number to this configuration, or detach it',
    description:
      "Spec 3.3. `attach`: the number must be of type `inbound` or `both` (else 409 `conflict`) and not attached elsewhere (409: detach it there first); attaching again is a no-op. `detach`: the number must be attached to this configuration (else 409 `conflict`). With a real provider, attach points the number's voice webhook at the service and detach clears it (502 if the provider fails; nothing changes). Answers the number.",
  },
});

export const examples = {
  listInboundConfigurations: [inboundConfigurationExample],
  createInboundConfiguration: {
    ...inboundConfigurationExample,
    phoneNumberIds: [],
  },
  updateInboundConfiguration: {
    ...inboundConfigurationExample,
    name: 'Front desk (evenings)',
    humanAgents: [],
    knowledge_base_id: null,
  },
  attachPhoneNumber: {
    ...phoneNumberExample,
    inboundConfigurationId: INBOUND_ID_EXAMPLE,
  },
};
