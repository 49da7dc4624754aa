import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA_MODULE } from './build-schema';
import { SQLITE_SCHEMA } from './schema.generated';

describe('the bundled SQLite schema', () => {
  it('is the bundle of the current .sql file (run `build:schema` after editing it)', () => {
    expect(readFileSync(SCHEMA_MODULE.file, 'utf8')).toBe(SCHEMA_MODULE.fresh());
  });

  it('carries the .sql file byte for byte, its four tables', () => {
    expect(SQLITE_SCHEMA).toBe(readFileSync(new URL('./schema.sql', import.meta.url), 'utf8'));
    expect(SQLITE_SCHEMA.match(/CREATE TABLE IF NOT EXISTS (\w+)/g)).toEqual([
      'CREATE TABLE IF NOT EXISTS switchyard_meta',
      'CREATE TABLE IF NOT EXISTS switchyard_sessions',
      'CREATE TABLE IF NOT EXISTS switchyard_history',
      'CREATE TABLE IF NOT EXISTS switchyard_journal',
    ]);
  });
});
