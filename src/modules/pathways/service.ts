// Pathways (DESIGN.md "Conversational pathways"): checking a document, and
// resolving the pathway a call names: a document given inline, `{ id }` of an
// object of the owner's `conversational-pathways` store (decrypted with the
// store's key, as agents are), or the old `{ name?, steps }` list.
import { AppError } from '../../http/errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../http/json-body.js';
import { ParameterSchemas } from '../custom-tools/parameters.js';
import type { StoreRecords } from '../data/store-records.js';
import { fromLegacyPathway, isLegacyPathway, legacyPath } from './legacy.js';
import type { PathwayDocument, PathwayIssue } from './schemas.js';
import { validatePathway } from './validate.js';

/** The largest pathway document, as JSON (the validate route's body limit too). */
export const PATHWAY_MAX_BYTES = 1024 * 1024;

/** A pathway ready to run: its document (valid), its id when it came from the store, and the validator's warnings. */
export interface ResolvedPathway {
  id: string | null;
  document: PathwayDocument;
  warnings: PathwayIssue[];
}

/** 422 `invalid_pathway` with every error: the answer of the validate route, and of calls and campaigns given an invalid pathway. */
export function invalidPathway(errors: PathwayIssue[]): AppError {
  const first = errors[0];
  const summary = first ? `; the first: ${first.path || '(the document)'} ${first.message}` : '';
  return new AppError(
    'invalid_pathway',
    `the pathway is not valid: ${errors.length} error${errors.length === 1 ? '' : 's'}${summary}`,
    { errors },
  );
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface InlineOptions {
  /**
   * The call's own variables (a call payload's `variables`). An old steps
   * list declares none, so these are declared for it (typed by their values)
   * and its steps may name them; a document declares its own.
   */
  variables?: Readonly<Record<string, string | number | boolean>>;
}

function withCallVariables(document: PathwayDocument, variables: InlineOptions['variables']): PathwayDocument {
  const names = Object.keys(variables ?? {});
  if (!names.length) return document;
  const declared = Object.fromEntries(
    names.map((name) => [name, { type: typeof variables![name] as 'string' | 'number' | 'boolean' }]),
  );
  return { ...document, variables: declared };
}

export class PathwayService {
  /** Compiles inline tools' `parameters` as the custom tools will (a bounded cache of its own). */
  private readonly parameterSchemas = new ParameterSchemas();
  private readonly options = { parametersProblem: (schema: unknown) => this.parameterSchemas.problem(schema) };

  constructor(private readonly records: Pick<StoreRecords, 'read'>) {}

  /** The document and its warnings when it is valid; otherwise throws invalid_pathway with every error. */
  check(input: unknown): { document: PathwayDocument; warnings: PathwayIssue[] } {
    const { errors, warnings } = validatePathway(input, this.options);
    if (errors.length) throw invalidPathway(errors);
    return { document: input as PathwayDocument, warnings };
  }

  /**
   * The pathway `ref` names for a call of `userId`: a document, `{ id }` of
   * the user's `conversational-pathways` store (another user's id, or one not
   * in that store, is 404 not_found), or `{ name?, steps }`. Invalid: 422
   * invalid_pathway with every error. `options`: the call's variables.
   */
  async resolvePathway(userId: string, ref: unknown, options: InlineOptions = {}): Promise<ResolvedPathway> {
    return this.resolveInline(ref, options) ?? this.stored(userId, ref as Record<string, unknown>);
  }

  /**
   * resolvePathway without the store, so a caller can check before it spends
   * anything (a signed payload's jti): the pathway of an inline document or
   * old list, or null when `ref` names a stored one (`{ id }`). Same errors.
   */
  resolveInline(ref: unknown, options: InlineOptions = {}): ResolvedPathway | null {
    if (!isRecord(ref))
      throw invalidPathway([{ path: '', message: 'a pathway is a document, `{ id }` or `{ name?, steps }`' }]);
    if (isLegacyPathway(ref)) {
      const converted = fromLegacyPathway(ref);
      if ('errors' in converted) throw invalidPathway(converted.errors);
      const document = withCallVariables(converted.document, options.variables);
      const { errors, warnings } = validatePathway(document, this.options);
      // Only a step's text can be wrong here (a {{name}} it cannot know).
      if (errors.length) throw invalidPathway(errors.map((e) => ({ ...e, path: legacyPath(e.path) })));
      return { id: null, document, warnings };
    }
    if (ref.nodes === undefined && ref.start === undefined && ref.id !== undefined) return null;
    return { id: null, ...this.check(ref) };
  }

  private async stored(userId: string, ref: Record<string, unknown>): Promise<ResolvedPathway> {
    const { id } = ref;
    if (typeof id !== 'string' || id.length === 0 || id.length > 200)
      throw invalidPathway([
        { path: '/id', message: 'must be the id of an object of your conversational-pathways store' },
      ]);
    const extra = Object.keys(ref).filter((key) => key !== 'id');
    if (extra.length)
      throw invalidPathway(
        extra.map((key) => ({
          path: `/${key}`,
          message: 'is not a field here: name a stored pathway by `{ id }` alone',
        })),
      );
    const plain = await this.records.read(userId, 'conversational-pathways', id);
    if (plain.length > PATHWAY_MAX_BYTES)
      throw invalidPathway([
        { path: '', message: `the stored pathway is ${plain.length} bytes: at most ${PATHWAY_MAX_BYTES}` },
      ]);
    let document: unknown;
    try {
      document = JSON.parse(plain.toString('utf8'));
    } catch {
      throw invalidPathway([{ path: '', message: 'the stored pathway is not JSON' }]);
    }
    if (nestsDeeperThan(document, MAX_JSON_DEPTH))
      throw invalidPathway([{ path: '', message: `the stored pathway nests deeper than ${MAX_JSON_DEPTH} levels` }]);
    return { id, ...this.check(document) };
  }
}
