// The stock sqlite3 CLI as a foreign client: writes land through it exactly as an agent's would, and `.dump` is the
// logical content every correctness assertion compares.
import { execFileSync } from 'node:child_process';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';

/**
 * Runs SQL on a database file through the sqlite3 CLI (a separate process, like any foreign writer), with a busy
 * timeout as real clients set one: a capture engine's own checkpoints may briefly hold the write lock.
 */
export function runSql(file: string, sql: string): void {
  execFileSync('sqlite3', ['-bail', '-cmd', '.timeout 5000', file], { input: sql, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** The `.dump` of one database file. */
export function dump(file: string): string {
  return execFileSync('sqlite3', [file, '.dump'], { encoding: 'utf8' });
}

/** The output of one query through the sqlite3 CLI (list mode, `|`-separated). */
export function query(file: string, sql: string): string {
  return execFileSync('sqlite3', [file, sql], { encoding: 'utf8' });
}

const SEPARATOR = '-- offshoot-dump-separator --';

/** The `.dump` of many database files from one sqlite3 process, in order. */
export function dumpMany(files: readonly string[]): string[] {
  if (files.length === 0) return [];
  const script = files.map((f) => `.open '${f.replaceAll("'", "''")}'\n.dump\n.print ${SEPARATOR}\n`).join('');
  const out = execFileSync('sqlite3', [], { input: script, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const parts = out.split(`${SEPARATOR}\n`);
  if (parts.length !== files.length + 1)
    throw new Error(`dumpMany: expected ${files.length} dumps, got ${parts.length - 1}`);
  return parts.slice(0, files.length);
}

/** Loads a `.dump` into a fresh database file (the model's private copy of a checkout). */
export function restoreDump(file: string, text: string): void {
  execFileSync('sqlite3', ['-bail', file], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** The `.dump` of an empty database (created at `file`), as this sqlite3 prints it. */
export function emptyDump(file: string): string {
  openDatabase(file).close();
  return dump(file);
}
