// client.events: opens subscriptions to GET /api/events/{type}.
import type { Operation, PathParamsOf } from './api-types.js';
import type { EventPayloads, EventType } from './event-types.js';
import { EventSubscription, type SubscribeOptions } from './events.js';
import type { HttpCore } from './http.js';

export type EventSelector = EventType | readonly EventType[] | 'all';
type PayloadFor<S extends EventSelector> = S extends EventType
  ? EventPayloads[S]
  : S extends readonly (infer E extends EventType)[]
    ? EventPayloads[E]
    : EventPayloads[EventType];

export class EventsApi {
  constructor(private readonly http: HttpCore) {}

  /**
   * Subscribes to one event type, several, or 'all'. The connection opens
   * right away (await `ready` before acting on what you want to observe) and
   * reconnects on its own until close().
   */
  subscribe<S extends EventSelector>(
    types: S,
    options: SubscribeOptions<PayloadFor<S>> = {},
  ): EventSubscription<PayloadFor<S>> {
    const type = typeof types === 'string' ? types : (types as readonly string[]).join(',');
    // The path's {type} may hold a comma list; keep the commas readable.
    const params: PathParamsOf<Operation<'/api/events/{type}', 'get'>> = { type };
    const url = this.http.url('/api/events/{type}', params, options.filter).replace(/%2C/gi, ',');
    return new EventSubscription<PayloadFor<S>>(this.http, url, options);
  }
}
