// Campaigns and the do-not-call list (DESIGN.md "Campaigns"): create a
// campaign, move it through its states, read its counts and contacts, wait
// for it to stop dialling (on its `campaign_status` events), and keep numbers
// that must never be dialled.
import type { Answer, Body, Query } from './api-types.js';
import type { EventsApi } from './events-api.js';
import type { HttpCore } from './http.js';

/** POST /api/campaigns's body: name, agent, fromNumberIds, contacts, and optional pacing, schedule, retry, voicemail, budgetUsd. */
export type CampaignInput = Body<'/api/campaigns', 'post'>;
/** A campaign as GET /api/campaigns/{id} answers it: status, counts per contact status, attempts, spend. */
export type Campaign = Answer<'/api/campaigns/{id}', 'get'>;
export type CampaignStatus = Campaign['status'];
/** One contact of a campaign with its attempts (GET /api/campaigns/{id}/contacts). */
export type CampaignContact = Answer<'/api/campaigns/{id}/contacts', 'get'>['items'][number];
/** One number of the do-not-call list. */
export type DoNotCallListing = Answer<'/api/do-not-call', 'put'>;

export interface WaitForCampaignOptions {
  /** Called with the campaign's counts as they change (at most once a second while it runs) and at each status change. */
  onProgress?: (campaign: Pick<Campaign, 'status' | 'counts'> & { reason?: string }) => void;
  /** Gives up (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** Statuses in which a campaign places no call until someone acts: the end of a wait. */
const STOPPED: ReadonlySet<CampaignStatus> = new Set(['completed', 'cancelled', 'paused']);

/** client.campaigns: outbound calls to many contacts, paced and within business hours. */
export class CampaignsApi {
  constructor(
    private readonly http: HttpCore,
    private readonly events: EventsApi,
  ) {}

  /** POST /api/campaigns: a draft; start() dials it. */
  create(input: CampaignInput): Promise<Answer<'/api/campaigns', 'post'>> {
    return this.http.request('post', '/api/campaigns', { body: input });
  }

  /** GET /api/campaigns: newest first; pass `next` as `before` for the next page. */
  list(query: Query<'/api/campaigns', 'get'> = {}): Promise<Answer<'/api/campaigns', 'get'>> {
    return this.http.request('get', '/api/campaigns', { query });
  }

  get(id: string): Promise<Campaign> {
    return this.http.request('get', '/api/campaigns/{id}', { params: { id } });
  }

  /** GET /api/campaigns/{id}/contacts: in the order given, with their attempts; `status` filters; pass `next` as `cursor`. */
  contacts(
    id: string,
    query: Query<'/api/campaigns/{id}/contacts', 'get'> = {},
  ): Promise<Answer<'/api/campaigns/{id}/contacts', 'get'>> {
    return this.http.request('get', '/api/campaigns/{id}/contacts', { params: { id }, query });
  }

  /** draft to running; 402 insufficient_funds when one minute to the first contact cannot be paid, 409 invalid_state from another status. */
  start(id: string): Promise<Answer<'/api/campaigns/{id}/start', 'post'>> {
    return this.http.request('post', '/api/campaigns/{id}/start', { params: { id } });
  }

  /** running to paused: no new call; calls under way go on. */
  pause(id: string): Promise<Answer<'/api/campaigns/{id}/pause', 'post'>> {
    return this.http.request('post', '/api/campaigns/{id}/pause', { params: { id } });
  }

  /** paused to running (also after it paused itself); 402 as for start. */
  resume(id: string): Promise<Answer<'/api/campaigns/{id}/resume', 'post'>> {
    return this.http.request('post', '/api/campaigns/{id}/resume', { params: { id } });
  }

  /** draft, running or paused to cancelled, for good. */
  cancel(id: string): Promise<Answer<'/api/campaigns/{id}/cancel', 'post'>> {
    return this.http.request('post', '/api/campaigns/{id}/cancel', { params: { id } });
  }

  /** Only when it is not running (409 invalid_state); its calls and its store record stay. */
  async delete(id: string): Promise<void> {
    await this.http.request('delete', '/api/campaigns/{id}', { params: { id } });
  }

  /**
   * Resolves with the campaign once it no longer dials: `completed`, `cancelled`, or `paused` (by you, or by
   * itself: `reason` insufficient_funds or budget_reached; resume() and wait again). Follows its
   * `campaign_status` events; the stream reconnects by itself and resumes where it was, so no change is missed.
   */
  async waitUntilDone(id: string, options: WaitForCampaignOptions = {}): Promise<Campaign> {
    const { signal, onProgress } = options;
    signal?.throwIfAborted();
    const events = this.events.subscribe('campaign_status', { filter: { campaign_id: id }, signal });
    try {
      await events.ready;
      // Read after the stream is open: a change from now on is an event, one before it is in this answer.
      const now = await this.get(id);
      onProgress?.(now);
      if (STOPPED.has(now.status)) return now;
      for await (const event of events) {
        onProgress?.(event.data);
        if (STOPPED.has(event.data.status)) return await this.get(id);
      }
      throw new Error(`the event stream of campaign ${id} ended before the campaign stopped`);
    } catch (error) {
      signal?.throwIfAborted(); // closed by the signal: its reason, not the stream's
      throw error;
    } finally {
      await events.close();
    }
  }
}

/** client.doNotCall: numbers no outbound call of yours dials (campaign contacts end `do_not_call`; single calls get 409). */
export class DoNotCallApi {
  constructor(private readonly http: HttpCore) {}

  /** PUT /api/do-not-call: lists a number (E.164); listing it again changes nothing. */
  add(phone: string, options: { reason?: string } = {}): Promise<DoNotCallListing> {
    return this.http.request('put', '/api/do-not-call', { body: { phone, ...options } });
  }

  /** GET /api/do-not-call: in number order; pass `next` as `after` for the next page. */
  list(query: Query<'/api/do-not-call', 'get'> = {}): Promise<Answer<'/api/do-not-call', 'get'>> {
    return this.http.request('get', '/api/do-not-call', { query });
  }

  /** DELETE /api/do-not-call/{phone}: outbound calls may dial it again; 404 when it is not listed. */
  async remove(phone: string): Promise<void> {
    await this.http.request('delete', '/api/do-not-call/{phone}', { params: { phone } });
  }
}
