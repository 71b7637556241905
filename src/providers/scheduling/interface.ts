// Scheduling providers for integrations (DESIGN "Integrations"): Calendly's
// API, or the sandbox stand-in that answers offline.

/** Who the token belongs to (Calendly GET /users/me). */
export interface SchedulingUser {
  uri: string;
  name: string | null;
  schedulingUrl: string | null;
  timezone: string | null;
}

export interface EventType {
  uri: string;
  name: string;
  slug: string;
  schedulingUrl: string;
  durationMinutes: number | null;
  active: boolean;
}

export interface AvailableSlot {
  /** ISO 8601, UTC. */
  startTime: string;
  /** Link that books this slot. */
  schedulingUrl: string;
}

export interface BookingLink {
  /** Single-use booking page for the event type. */
  bookingUrl: string;
}

export interface SchedulingProvider {
  readonly name: string;
  readonly sandbox: boolean;
  /** The token's user; throws provider_refused (400) for a refused token, provider_error (502) when unreachable. */
  currentUser(token: string): Promise<SchedulingUser>;
  /** The user's event types (every page). */
  listEventTypes(token: string, userUri: string): Promise<EventType[]>;
  /** The user's event type that `ref` names (scheduling URL, API uri or slug); null when the user has none such. */
  findEventType(token: string, user: SchedulingUser, ref: string): Promise<EventType | null>;
  /** Open start times of an event type between two instants (at most 7 days apart, in the future). */
  availableTimes(token: string, eventTypeUri: string, start: Date, end: Date): Promise<AvailableSlot[]>;
  /** A single-use booking link for the event type. */
  createBookingLink(token: string, eventTypeUri: string): Promise<BookingLink>;
}
