// Writes a generated file, or with --check (CI) fails when the committed copy
// differs from what was generated. Shared by the openapi.json and SDK type generators.
import { readFileSync, writeFileSync } from 'node:fs';

export function writeOrCheck(file: string, generated: string, messages: { stale: string; fresh: string }): void {
  if (!process.argv.includes('--check')) {
    writeFileSync(file, generated);
    console.log(`wrote ${file}`);
    return;
  }
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    /* missing counts as stale */
  }
  if (committed !== generated) {
    console.error(messages.stale);
    process.exit(1);
  }
  console.log(messages.fresh);
}
