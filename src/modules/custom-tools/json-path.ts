// The JSONPath subset `assign` uses to pick fields of a tool's answer:
// `$` then any number of `.name`, `[index]` and `["any key"]` steps, such as
// `$.booking.slots[0].start`. No wildcards, filters, slices or recursion: one
// path names at most one value, so a variable gets one value or none.

export type PathStep = string | number;

const NAME = /^[A-Za-z_$][A-Za-z0-9_$-]*/;
export const MAX_PATH_LENGTH = 256;

/** The steps of a path, or a message saying why it is not one. */
export function parseJsonPath(path: string): PathStep[] | string {
  if (path.length > MAX_PATH_LENGTH) return `is longer than ${MAX_PATH_LENGTH} characters`;
  if (!path.startsWith('$')) return 'must start with $ (such as $.booking.id)';
  const steps: PathStep[] = [];
  let rest = path.slice(1);
  while (rest.length > 0) {
    if (rest.startsWith('.')) {
      const name = NAME.exec(rest.slice(1))?.[0];
      if (!name) return `has no field name after "." at "${rest}"`;
      steps.push(name);
      rest = rest.slice(1 + name.length);
      continue;
    }
    const index = /^\[(\d{1,9})\]/.exec(rest);
    if (index) {
      steps.push(Number(index[1]));
      rest = rest.slice(index[0].length);
      continue;
    }
    const quoted = /^\[("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\]/.exec(rest);
    if (quoted) {
      const literal = quoted[1];
      try {
        steps.push(
          literal.startsWith('"') ? (JSON.parse(literal) as string) : literal.slice(1, -1).replace(/\\(.)/g, '$1'),
        );
      } catch {
        return `has an invalid quoted key at "${rest}"`;
      }
      rest = rest.slice(quoted[0].length);
      continue;
    }
    return `is not in the supported subset ($, .name, [0], ["key"]) at "${rest}"`;
  }
  return steps;
}

/** The value at `steps` in `value`, or undefined when any step is missing. Only own fields are read. */
export function readJsonPath(value: unknown, steps: readonly PathStep[]): unknown {
  let current = value;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(current) || step >= current.length) return undefined;
      current = current[step];
    } else {
      if (typeof current !== 'object' || current === null || Array.isArray(current) || !Object.hasOwn(current, step))
        return undefined;
      current = (current as Record<string, unknown>)[step];
    }
  }
  return current;
}
