import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** A seed: SQL text, a path to a `.sql` file, or a callback that fills the database at `dbPath` itself. */
export type Seed = string | ((dbPath: string) => Promise<void> | void);

/** True when a string seed names a `.sql` file rather than being SQL itself. */
export function isSqlPath(seed: string): boolean {
  return !seed.includes('\n') && seed.endsWith('.sql') && existsSync(seed);
}

/** What makes two seeds the same: the SQL's hash (text or file contents), or the callback's identity. */
export function seedFingerprint(seed: Seed): unknown {
  if (typeof seed === 'function') return seed;
  const sql = isSqlPath(seed) ? readFileSync(resolve(seed), 'utf8') : seed;
  return `sql:${createHash('sha256').update(sql).digest('hex')}`;
}

/** The SQL text of a string seed. */
export function seedSql(seed: string): string {
  return isSqlPath(seed) ? readFileSync(resolve(seed), 'utf8') : seed;
}

/**
 * Wraps SQL in one transaction unless it opens its own after its leading comments and PRAGMAs (as `.dump` output
 * does), so a seed either applies whole or not at all. The `;` before COMMIT ends a last statement written without
 * one.
 */
export function inTransaction(sql: string): string {
  const body = sql.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/|PRAGMA\b[^;]*;)*/i, '');
  return /^BEGIN\b/i.test(body) ? sql : `BEGIN;\n${sql}\n;\nCOMMIT;\n`;
}
