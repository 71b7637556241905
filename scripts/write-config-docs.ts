// Writes docs/configuration.md from the configuration's declarations, or with
// --check fails when the committed file differs from them (CI runs the check).
import { join } from 'node:path';
import { configReference } from './config-reference.js';
import { writeOrCheck } from './generated-file.js';

writeOrCheck(join(process.cwd(), 'docs/configuration.md'), configReference(), {
  stale:
    'docs/configuration.md differs from the declarations in src/config/: run `npx tsx scripts/write-config-docs.ts` and commit it.',
  fresh: 'docs/configuration.md matches the declarations in src/config/',
});
