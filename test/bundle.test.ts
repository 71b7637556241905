// The bundle's source stays on V8's heap for the server's life: one character beyond Latin-1 anywhere in it makes
// V8 hold all 2 MB as a two-byte string (4 MB), so the build refuses such a character and says where it is.
import { describe, expect, it } from 'vitest';
import { checkOneByteSource } from '../scripts/bundle.mjs';

describe('the bundle stays a one-byte string', () => {
  it('accepts ASCII and Latin-1 (é, µ, ×)', () => {
    expect(() => checkOneByteSource('const a = "caf\u00e9 5 \u00b5s 2\u00d7";\n')).not.toThrow();
  });

  it('refuses a character beyond Latin-1 and names its line', () => {
    expect(() => checkOneByteSource('const a = 1;\nconst ends = /[.!?\u2026]+/;\n')).toThrow(
      /line 2 holds "\u2026".*\\u escape/,
    );
    expect(() => checkOneByteSource('// a \u2192 b\n')).toThrow(/line 1/);
  });
});
