/**
 * Bundles the SQLite store's schema (`schema.sql`) into `schema.generated.ts`. Run by the package's
 * `build` script before tsup; `schema.test.ts` fails when the committed module differs from a fresh one.
 */
import { fileEmbedding, isMain } from '@switchyard/config/embed';

export const SCHEMA_MODULE = fileEmbedding(import.meta.url, { source: 'schema.sql', name: 'SQLITE_SCHEMA', what: "The SQLite session store's tables, created when missing.", regenerate: 'pnpm --filter @switchyard/session run build:schema' });

if (isMain(import.meta.url)) SCHEMA_MODULE.write();
