// Builds the event area: the recorder other areas write events through, the
// live streams, and the one-time tickets that open a stream without credentials.
import type { Config } from '../../config.js';
import type { DatabaseHandle } from '../../db/database.js';
import type { Authenticator } from '../../http/auth.js';
import type { Clock } from '../../lib/clock.js';
import type { Secrets } from '../../secrets.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import { EventRecorder } from './recorder.js';
import { createEventStreams } from './service.js';
import { EventTickets } from './tickets.js';

export interface EventServiceDeps {
  database: DatabaseHandle;
  /** EVENTS_* (the live streams' limits). */
  config: Pick<Config, 'events'>;
  /** Tickets are signed with a key derived from jwtSecret. */
  secrets: Pick<Secrets, 'jwtSecret'>;
  singleUse: SingleUseTokens;
  /** A ticket is issued to whoever the auth area's authenticator accepts. */
  auth: { authenticator: Authenticator };
  clock: Clock;
}

export function createEventServices(deps: EventServiceDeps) {
  const eventRecorder = new EventRecorder(deps.clock, deps.database.dialect);
  return {
    eventRecorder,
    eventStreams: createEventStreams(deps.database, eventRecorder, deps.config.events),
    eventTickets: new EventTickets(deps.secrets.jwtSecret, deps.singleUse, deps.auth.authenticator, deps.clock),
  };
}
