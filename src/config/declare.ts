// The building blocks of the configuration's declarations: one Variable per
// environment variable (name, parser with its default and bounds, one-line doc)
// and one Section per area (its variables and one hook for the rules that join
// them). src/config.ts runs the sections; scripts/write-config-docs.ts prints
// docs/configuration.md from the same declarations.

import type { Config } from './types.js';

export type Env = Record<string, string | undefined>;

export interface Variable<T> {
  name: string;
  /** One line for docs/configuration.md (Markdown). */
  doc: string;
  /** The default as the reference shows it ('—' when there is none). */
  shown: string;
  /** Turns the trimmed value (null when unset or blank) into T; a bad value is reported and the default returned. */
  parse(raw: string | null, report: (problem: string) => void): T;
}

/** What a section's rule hook may use besides its own variables. */
export interface LoadContext {
  nodeEnv: string;
  /** What the sections before this one built (the server section comes first: publicUrl is there). */
  earlier: Partial<Config>;
  cwd: string;
  env: Env;
  /** The trimmed value of a variable whose name is made at run time (OIDC_<SLUG>_...), documented by a pattern entry. */
  raw(name: string): string | null;
  problem(message: string): void;
  /** The list problem() appends to, for parsers that take one (parseRateLimits). */
  problems: string[];
  warn(message: string): void;
  /** Checks that value is a URL with one of the protocols; reports and returns null when not. */
  url(name: string, value: string, protocols: string[]): URL | null;
}

/** Reads one declared variable; each is parsed once however often it is read. */
export type Read = <T>(variable: Variable<T>) => T;

export interface Section<T> {
  title: string;
  /** A paragraph under the section's heading in the reference. */
  intro?: string;
  variables: Variable<unknown>[];
  /** Builds the section's part of the Config; the cross-variable rules of the section live here. */
  load(read: Read, context: LoadContext): T;
}

export function section<T>(
  title: string,
  variables: Record<string, Variable<unknown>>,
  load: Section<T>['load'],
  intro?: string,
): Section<T> {
  return { title, intro, variables: Object.values(variables), load };
}

const code = (value: string | number) => `\`${value}\``;

/** A string with a default (blank counts as unset). */
export function text(name: string, fallback: string, doc: string, shown = code(fallback)): Variable<string> {
  return { name, doc, shown, parse: (raw) => raw ?? fallback };
}

/** A string that may be absent (null); `shown` says what absence means when it means more than nothing. */
export function optional(name: string, doc: string, shown = '—'): Variable<string | null> {
  return { name, doc, shown, parse: (raw) => raw };
}

/** A whole number from min to max. */
export function integer(
  name: string,
  fallback: number,
  min: number,
  max: number,
  doc: string,
  shown = code(fallback),
): Variable<number> {
  return {
    name,
    doc,
    shown,
    parse(raw, report) {
      if (raw === null) return fallback;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < min || n > max) {
        report(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
        return fallback;
      }
      return n;
    },
  };
}

/** A whole number from min to max, or null when unset. */
export function optionalInteger(name: string, min: number, max: number, doc: string): Variable<number | null> {
  const inner = integer(name, 0, min, max, doc, '—');
  return { ...inner, parse: (raw, report) => (raw === null ? null : inner.parse(raw, report)) };
}

const DECIMALS = ['no', 'one', 'two', 'three', 'four'];

/** An amount of US dollars with at most `decimals` decimals, as a whole number of 10^-decimals dollars (cents for 2). */
export function usdAmount(
  name: string,
  fallback: string,
  decimals: 1 | 2 | 3 | 4,
  maxUsd: number,
  doc: string,
): Variable<number> {
  const scale = 10 ** decimals;
  const shape = new RegExp(`^\\d+(\\.\\d{1,${decimals}})?$`);
  const units = (text: string) => Math.round(Number(text) * scale);
  return {
    name,
    doc,
    shown: code(fallback),
    parse(raw, report) {
      const text = raw ?? fallback;
      const amount = units(text);
      if (shape.test(text) && amount >= 1 && amount <= maxUsd * scale) return amount;
      report(
        `${name} must be an amount in USD from ${1 / scale} to ${maxUsd} with at most ${DECIMALS[decimals]} decimals (got "${text}")`,
      );
      return units(fallback);
    },
  };
}

/** 1/true/yes or 0/false/no (any case). */
export function flag(
  name: string,
  doc: string,
  fallback = false,
  shown = fallback ? code(1) : 'off',
): Variable<boolean> {
  return {
    name,
    doc,
    shown,
    parse(raw, report) {
      if (raw === null) return fallback;
      if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
      if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
      report(`${name} must be 1/true/yes or 0/false/no (got "${raw}")`);
      return fallback;
    },
  };
}

/** One of a few words (compared in lower case), or null when unset. */
export function choice<const W extends string>(
  name: string,
  words: readonly W[],
  doc: string,
  shown: string,
): Variable<W | null> {
  return {
    name,
    doc,
    shown,
    parse(raw, report) {
      if (raw === null) return null;
      const word = raw.toLowerCase();
      if ((words as readonly string[]).includes(word)) return word as W;
      report(`${name} must be one of ${words.join(', ')} (got "${word}")`);
      return null;
    },
  };
}

/** Checks a URL's protocol; shared by the url declarations and the rule hooks. */
export function checkUrl(name: string, value: string, protocols: string[], report: (problem: string) => void) {
  try {
    const u = new URL(value);
    if (!protocols.includes(u.protocol)) throw new Error();
    return u;
  } catch {
    report(`${name} must be a ${protocols.join(' or ')} URL (got "${value}")`);
    return null;
  }
}

/** A URL that may be absent, checked as given (the rule hook drops a trailing slash where the value is an origin or base). */
export function optionalUrl(name: string, protocols: string[], doc: string, shown = '—'): Variable<string | null> {
  return {
    name,
    doc,
    shown,
    parse(raw, report) {
      if (raw === null) return null;
      checkUrl(name, raw, protocols, report);
      return raw;
    },
  };
}

/** A URL with a default (an API origin), checked as given. */
export function urlWithDefault(name: string, fallback: string, protocols: string[], doc: string): Variable<string> {
  const inner = optionalUrl(name, protocols, doc, code(fallback));
  return { ...inner, parse: (raw, report) => inner.parse(raw ?? fallback, report) ?? fallback };
}

/** Only documented here: names made at run time (a pattern such as OIDC_<SLUG>_ISSUER), or read by another module. */
export function pattern(name: string, doc: string, shown = '—'): Variable<null> {
  return { name, doc, shown, parse: () => null };
}
