// Inbound configurations (spec 4.12, 2.13, 3.3; DESIGN "Telephony"): which
// agent answers a number's calls, with which humans, campaign source and
// knowledge base. References must be objects in the caller's stores, read
// through the data area's services. Attach/detach move one number at a time
// with a conditional update, so concurrent attaches cannot both win.
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import type { ObjectService } from '../data/objects-service.js';
import type { RootService, StoreName } from '../data/root-service.js';
import { isForeignKeyViolation } from '../data/store.js';
import { type PhoneNumberView, toPhoneNumberView } from './numbers-service.js';
import type { TelephonyStore } from './store.js';
import type { InboundConfigurationsTable } from './tables.js';

/**
 * The seam to the knowledge area, which implements it (createKnowledgeServices'
 * `lookup`). Without one, a `knowledge_base_id` cannot be checked and is refused (400).
 */
export interface KnowledgeBaseLookup {
  /** True when the knowledge base exists and belongs to the user. */
  knowledgeBaseExists(userId: string, id: string): Promise<boolean>;
}

export type Reference = { id: string; type: string } & Record<string, unknown>;
export type SourceReference = { type: 'campaigns'; id: string } | { type: 'manual' };

export interface InboundInput {
  name: string;
  description?: string | null;
  agent: Reference;
  source: SourceReference & Record<string, unknown>;
  humanAgents?: Reference[];
  knowledge_base_id?: string | null;
}

export type InboundPatch = Partial<
  Pick<InboundInput, 'name' | 'description' | 'source' | 'humanAgents' | 'knowledge_base_id'>
>;

export interface InboundView {
  id: string;
  name: string;
  description: string | null;
  agent: Reference;
  source: Record<string, unknown>;
  humanAgents: Reference[];
  knowledge_base_id: string | null;
  phoneNumberIds: string[];
  createdAt: string;
  updatedAt: string;
}

/** A reference is kept as sent; this bounds what one may carry. */
const MAX_REFERENCE_BYTES = 4096;

/** Where a call to one of the service's numbers goes: its owner, the number, and the configuration attached (null: none). */
export interface InboundRoute {
  userId: string;
  number: PhoneNumberView;
  configuration: InboundView | null;
}

export class InboundConfigurationService {
  constructor(
    private readonly store: TelephonyStore,
    private readonly objects: ObjectService,
    private readonly root: RootService,
    private readonly providers: TelephonyProviders,
    private readonly knowledge: KnowledgeBaseLookup | null,
    private readonly clock: Clock,
    /** PUBLIC_URL: attached numbers' voice webhooks point under it. */
    private readonly publicUrl: string,
  ) {}

  /** The route of a call to number `numberId` (null when the number is unknown); used by the provider's verified voice webhook. */
  async routeFor(numberId: string): Promise<InboundRoute | null> {
    const number = await this.store.findNumberById(numberId);
    if (!number) return null;
    const row = number.inbound_configuration_id
      ? await this.store.findConfiguration(number.user_id, number.inbound_configuration_id)
      : undefined;
    return {
      userId: number.user_id,
      number: toPhoneNumberView(number),
      configuration: row ? await this.view(number.user_id, row) : null,
    };
  }

  async list(userId: string): Promise<InboundView[]> {
    const [rows, attached] = await Promise.all([
      this.store.listConfigurations(userId),
      this.store.attachedNumberIds(userId),
    ]);
    return rows.map((row) => toView(row, attached.get(row.id) ?? []));
  }

  async get(userId: string, id: string): Promise<InboundView> {
    const row = await this.store.findConfiguration(userId, id);
    if (!row) throw notFound('inbound configuration');
    return this.view(userId, row);
  }

  async create(userId: string, input: InboundInput): Promise<InboundView> {
    const checked = await this.check(userId, input);
    const now = this.clock.now();
    const row: InboundConfigurationsTable = {
      id: newId(now),
      user_id: userId,
      ...checked,
      created_at: now,
      updated_at: now,
    };
    await this.store.insertConfiguration(row);
    return toView(row, []);
  }

  /** PUT: replaces the whole configuration (omitted optional fields are cleared). */
  async replace(userId: string, id: string, input: InboundInput): Promise<InboundView> {
    if (!(await this.store.findConfiguration(userId, id))) throw notFound('inbound configuration');
    const checked = await this.check(userId, input);
    const row = await this.store.updateConfiguration(userId, id, { ...checked, updated_at: this.clock.now() });
    if (!row) throw notFound('inbound configuration');
    return this.view(userId, row);
  }

  /** PATCH: changes only the fields sent. */
  async update(userId: string, id: string, patch: InboundPatch): Promise<InboundView> {
    const current = await this.store.findConfiguration(userId, id);
    if (!current) throw notFound('inbound configuration');
    const set: Partial<InboundConfigurationsTable> = { updated_at: this.clock.now() };
    if (patch.name !== undefined) set.name = checkName(patch.name);
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.source !== undefined) set.source = JSON.stringify(await this.checkSource(userId, patch.source));
    if (patch.humanAgents !== undefined)
      set.human_agents = JSON.stringify(await this.checkHumanAgents(userId, patch.humanAgents));
    if (patch.knowledge_base_id !== undefined)
      set.knowledge_base_id = await this.checkKnowledgeBase(userId, patch.knowledge_base_id);
    const row = await this.store.updateConfiguration(userId, id, set);
    if (!row) throw notFound('inbound configuration');
    return this.view(userId, row);
  }

  /** Detaches its numbers (clearing their voice webhooks), then deletes it. */
  async delete(userId: string, id: string): Promise<void> {
    if (!(await this.store.findConfiguration(userId, id))) throw notFound('inbound configuration');
    for (const number of await this.store.listNumbersOfConfiguration(userId, id))
      await this.detach(userId, id, number.id);
    if (!(await this.store.deleteConfiguration(userId, id))) throw notFound('inbound configuration');
  }

  /** Spec 3.3: a detached number of type `inbound` or `both` becomes attached to this configuration. */
  async attach(userId: string, id: string, numberId: string): Promise<PhoneNumberView> {
    if (!(await this.store.findConfiguration(userId, id))) throw notFound('inbound configuration');
    const number = await this.store.findNumber(userId, numberId);
    if (!number) throw notFound('phone number');
    if (number.type !== 'both' && number.type !== 'inbound')
      throw new AppError('conflict', `a number of type "${number.type}" cannot take calls, so it cannot be attached`);
    if (number.status !== 'active') throw new AppError('conflict', `the number is ${number.status}, not active`);
    if (number.inbound_configuration_id === id) return toPhoneNumberView(number);
    if (number.inbound_configuration_id !== null)
      throw new AppError('conflict', 'the number is attached to another inbound configuration: detach it there first');
    let moved: boolean;
    try {
      moved = await this.store.moveAttachment(userId, numberId, null, id, this.clock.now());
    } catch (err) {
      if (isForeignKeyViolation(err)) throw notFound('inbound configuration'); // deleted meanwhile
      throw err;
    }
    if (!moved) throw new AppError('conflict', 'the number was attached or changed meanwhile; read it again');
    try {
      await this.providerOf(number.provider).setVoiceUrl(
        number.provider_sid!,
        `${this.publicUrl}/api/webhooks/twilio/voice/${number.id}`,
      );
    } catch (err) {
      await this.store.moveAttachment(userId, numberId, id, null, this.clock.now());
      throw err;
    }
    return this.numberView(userId, numberId);
  }

  /** Spec 3.3: a number attached to this configuration becomes detached. */
  async detach(userId: string, id: string, numberId: string): Promise<PhoneNumberView> {
    if (!(await this.store.findConfiguration(userId, id))) throw notFound('inbound configuration');
    const number = await this.store.findNumber(userId, numberId);
    if (!number) throw notFound('phone number');
    if (number.inbound_configuration_id !== id)
      throw new AppError('conflict', 'the number is not attached to this inbound configuration');
    if (!(await this.store.moveAttachment(userId, numberId, id, null, this.clock.now())))
      throw new AppError('conflict', 'the number was detached or changed meanwhile; read it again');
    try {
      await this.providerOf(number.provider).setVoiceUrl(number.provider_sid!, null);
    } catch (err) {
      await this.store.moveAttachment(userId, numberId, null, id, this.clock.now());
      throw err;
    }
    return this.numberView(userId, numberId);
  }

  private async numberView(userId: string, numberId: string): Promise<PhoneNumberView> {
    const row = await this.store.findNumber(userId, numberId);
    if (!row) throw notFound('phone number');
    return toPhoneNumberView(row);
  }

  private providerOf(slug: string) {
    const provider = this.providers.get(slug);
    if (!provider) throw new AppError('provider_error', `provider "${slug}" is not configured on this server`);
    return provider;
  }

  private async view(userId: string, row: InboundConfigurationsTable): Promise<InboundView> {
    const numbers = await this.store.listNumbersOfConfiguration(userId, row.id);
    return toView(
      row,
      numbers.map((n) => n.id),
    );
  }

  private async check(userId: string, input: InboundInput) {
    return {
      name: checkName(input.name),
      description: input.description ?? null,
      agent: JSON.stringify(await this.checkReference(userId, input.agent, 'agents', 'agent')),
      source: JSON.stringify(await this.checkSource(userId, input.source)),
      human_agents: JSON.stringify(await this.checkHumanAgents(userId, input.humanAgents ?? [])),
      knowledge_base_id: await this.checkKnowledgeBase(userId, input.knowledge_base_id ?? null),
    };
  }

  /** The object must be a record of the caller's `store` (a child of that store's container). */
  private async checkReference(userId: string, ref: Reference, store: StoreName, field: string): Promise<Reference> {
    if (ref.type !== store) throw invalidInput(`${field}.type must be "${store}"`);
    if (Buffer.byteLength(JSON.stringify(ref)) > MAX_REFERENCE_BYTES)
      throw invalidInput(`${field} is larger than ${MAX_REFERENCE_BYTES} bytes`);
    const container = await this.root.getStore(userId, store);
    const object = await this.objects.getObject(userId, ref.id).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'not_found') return null;
      throw err;
    });
    if (!object || object.relatedId !== container.id) throw notFound(`${field} ${ref.id} in your ${store} store`);
    return ref;
  }

  private async checkSource(userId: string, source: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (source.type === 'manual') return source;
    if (source.type === 'campaigns' && typeof source.id === 'string')
      return this.checkReference(userId, source as Reference, 'campaigns', 'source');
    throw invalidInput('source must be { "type": "campaigns", "id": <campaign object id> } or { "type": "manual" }');
  }

  /** Each must be in the caller's contacts; duplicates (same id) are removed, the first kept. */
  private async checkHumanAgents(userId: string, refs: Reference[]): Promise<Reference[]> {
    const seen = new Set<string>();
    const unique = refs.filter((r) => !seen.has(r.id) && seen.add(r.id));
    for (const ref of unique) await this.checkReference(userId, ref, 'contacts', 'humanAgents[]');
    return unique;
  }

  private async checkKnowledgeBase(userId: string, id: string | null): Promise<string | null> {
    if (id === null) return null;
    if (!this.knowledge)
      throw invalidInput('knowledge bases are not available on this server yet, so knowledge_base_id cannot be set');
    if (!(await this.knowledge.knowledgeBaseExists(userId, id))) throw notFound('knowledge base');
    return id;
  }
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw invalidInput('name must not be empty');
  return trimmed;
}

function toView(row: InboundConfigurationsTable, phoneNumberIds: string[]): InboundView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    agent: JSON.parse(row.agent) as Reference,
    source: JSON.parse(row.source) as Record<string, unknown>,
    humanAgents: JSON.parse(row.human_agents) as Reference[],
    knowledge_base_id: row.knowledge_base_id,
    phoneNumberIds,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
