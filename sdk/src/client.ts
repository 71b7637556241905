// WorkspaceClient: one object holding the base URL and credential, with the
// API grouped by area. Runs in Node 20+ and browsers (fetch, WebCrypto).
import type { Answer, Query } from './api-types.js';
import { ApiKeysApi, AuthApi } from './auth.js';
import { KeysApi, ObjectsApi, type RootObject, ServersApi, type StoreName } from './data.js';
import { EventsApi } from './events-api.js';
import { HttpCore, type HttpOptions } from './http.js';
import { IntegrationsApi, PersonasApi } from './personas.js';
import { StoreClient } from './store.js';
import { CallsApi } from './calls.js';
import { CampaignsApi, DoNotCallApi } from './campaigns.js';
import { type PathwayDocument, PathwaysApi } from './pathways.js';

export interface WorkspaceClientOptions extends HttpOptions {
  /** An API key (wsk_…) instead of a session token. */
  apiKey?: string;
}

export class WorkspaceClient {
  readonly http: HttpCore;
  readonly auth: AuthApi;
  readonly apiKeys: ApiKeysApi;
  readonly servers: ServersApi;
  readonly keys: KeysApi;
  readonly objects: ObjectsApi;
  readonly events: EventsApi;
  readonly personas: PersonasApi;
  readonly integrations: IntegrationsApi;
  readonly calls: CallsApi;
  /** Pathway documents: validate, and keep them in the `conversational-pathways` store. */
  readonly pathways: PathwaysApi;
  /** Outbound campaigns: create, start, pause, resume, cancel, read, and wait until one stops dialling. */
  readonly campaigns: CampaignsApi;
  /** Numbers no outbound call of this account dials. */
  readonly doNotCall: DoNotCallApi;
  private readonly stores = new Map<StoreName, StoreClient<unknown>>();
  private rootOnce: Promise<RootObject> | null = null;

  constructor(options: WorkspaceClientOptions) {
    this.http = new HttpCore({ ...options, token: options.apiKey ?? options.token });
    this.auth = new AuthApi(this.http);
    this.apiKeys = new ApiKeysApi(this.http);
    this.servers = new ServersApi(this.http);
    this.keys = new KeysApi(this.http);
    this.objects = new ObjectsApi(this.http, this.keys);
    this.events = new EventsApi(this.http);
    this.personas = new PersonasApi(this.http);
    this.integrations = new IntegrationsApi(this.http);
    this.calls = new CallsApi(this.http);
    this.pathways = new PathwaysApi(this.http, () => this.store<PathwayDocument>('conversational-pathways'));
    this.campaigns = new CampaignsApi(this.http, this.events);
    this.doNotCall = new DoNotCallApi(this.http);
  }

  /**
   * Calls `listener` whenever the session token changes: sign-in, a refreshed
   * token, logout (null). Returns the function that stops listening.
   */
  onTokenChange(listener: (token: string | null) => void): () => void {
    return this.http.onTokenChange(listener);
  }

  /** The credential sent as Authorization: Bearer (a session JWT or an API key), or null. */
  get token(): string | null {
    return this.http.token;
  }

  set token(value: string | null) {
    this.http.token = value;
    this.rootOnce = null;
    this.stores.clear();
  }

  /** The root object: the eight stores with their container ids and default keys, and the current server. Created on first call. */
  root(): Promise<RootObject> {
    return this.http.request('get', '/api/root', {});
  }

  /**
   * Helpers for one store's records: create, list, get, update, delete and
   * subscribe, with encryption done here. `T` is the shape of your records.
   */
  store<T = unknown>(name: StoreName): StoreClient<T> {
    let store = this.stores.get(name);
    if (!store) {
      store = new StoreClient<unknown>(name, () => this.cachedRoot(), this.objects, this.keys, this.events);
      this.stores.set(name, store);
    }
    return store as StoreClient<T>;
  }

  /** The sandbox outbox (SMS and email the sandbox providers would have sent); exists only on sandbox servers. */
  sandboxOutbox(query: Query<'/api/sandbox/outbox', 'get'> = {}): Promise<Answer<'/api/sandbox/outbox', 'get'>> {
    return this.http.request('get', '/api/sandbox/outbox', { query });
  }

  private cachedRoot(): Promise<RootObject> {
    if (!this.rootOnce) {
      this.rootOnce = this.root();
      this.rootOnce.catch(() => (this.rootOnce = null));
    }
    return this.rootOnce;
  }
}
