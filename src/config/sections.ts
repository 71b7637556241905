// Every section of the configuration, in the order src/config.ts runs them and
// docs/configuration.md lists them (the server first: the others use its publicUrl).
import { billingSection } from './billing.js';
import { callsSection } from './calls.js';
import { connectorSection } from './connector.js';
import type { Section } from './declare.js';
import { eventsSection } from './events.js';
import { knowledgeSection } from './knowledge.js';
import { messagingSection } from './messaging.js';
import { personasSection } from './personas.js';
import { serverSection } from './server.js';
import { voiceSection } from './voice.js';

export {
  billingSection,
  callsSection,
  connectorSection,
  eventsSection,
  knowledgeSection,
  messagingSection,
  personasSection,
  serverSection,
  voiceSection,
};

export const CONFIG_SECTIONS: Section<unknown>[] = [
  serverSection,
  eventsSection,
  messagingSection,
  billingSection,
  personasSection,
  knowledgeSection,
  connectorSection,
  callsSection,
  voiceSection,
];
