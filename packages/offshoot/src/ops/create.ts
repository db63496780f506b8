import { readSync, statSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SqliteDatabase } from '../sqlite/sqlite-database.js';
import { fail } from '../core/errors.js';
import { snapshotKey } from '../core/keys.js';
import { newLineageId } from '../core/lineage.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import { MAIN_BRANCH } from '../core/target.js';
import { encodeSnapshotFromDb } from '../ltx/encoder.js';
import { DB_HEADER_SIZE, type DbHeader, isWalMode, parseDbHeader } from '../sqlite/db-header.js';
import { corruptDatabase } from '../sqlite/sqlite-errors.js';
import type { OpsContext } from './helpers/context/context.js';
import { withTempDir } from './helpers/context/temp-dir.js';
import { openDatabase } from '../sqlite/sqlite-driver.js';
import { closeRawFile, openRawFile } from '../sqlite/raw-file.js';
import { logged } from './helpers/history/record.js';

/** What create made. */
export interface CreateResult {
  db: string;
  branch: string;
  txid: number;
  pageSize: number;
  pages: number;
}

const JOURNAL_MAGIC = Buffer.from([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]);

function unreadable(from: string, why: string, hint: string, cause?: unknown): Error {
  return fail('INVALID_ARGUMENT', `cannot import ${from}: ${why}`, { hint, ...(cause ? { cause } : {}) });
}

function corruptSource(from: string, why: string): Error {
  return fail('CORRUPT', `cannot import ${from}: ${why}`, {
    hint: 'import an intact copy (with its -wal, if it has one); the source was left untouched',
  });
}

function readHead(from: string, bytes: number): Buffer {
  const fd = openRawFile(from);
  try {
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, readSync(fd, buf, 0, bytes, 0));
  } finally {
    closeRawFile(fd);
  }
}

/** Bytes of a companion file (-wal, -shm, -journal), or undefined when it does not exist. */
function companionSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/**
 * Checks an import source without writing anything beside it: a regular, non-empty SQLite 3 file whose header is
 * sane and whose size holds every page the header counts, with no hot rollback journal (a writer that crashed
 * mid-transaction: opening it would have to roll the source back). Returns its header.
 */
function checkSource(from: string): DbHeader {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(from);
  } catch (err) {
    throw unreadable(from, (err as Error).message, 'pass the path of an existing SQLite database file', err);
  }
  if (st.isDirectory())
    throw unreadable(from, 'it is a directory', 'pass the path of the database file inside it, not the directory');
  if (!st.isFile()) throw unreadable(from, 'it is not a regular file', 'pass the path of an SQLite database file');
  if (st.size === 0) throw corruptSource(from, 'the file is empty (0 bytes): a truncated or unfinished copy?');
  const head = readHead(from, DB_HEADER_SIZE);
  if (!head.subarray(0, 16).equals(Buffer.from('SQLite format 3\0', 'latin1')))
    throw unreadable(from, 'it is not an SQLite database', 'pass the path of an existing SQLite database file');
  if (head.length < DB_HEADER_SIZE) throw corruptSource(from, `truncated: only ${st.size} bytes, not even a header`);
  let h: DbHeader;
  try {
    h = parseDbHeader(head);
  } catch (err) {
    throw corruptSource(from, `its header is malformed (${(err as Error).message})`);
  }
  const expected = h.pageCount * h.pageSize;
  if (st.size % h.pageSize !== 0 || (h.versionValidFor === h.changeCounter && st.size < expected)) {
    throw corruptSource(
      from,
      `truncated: the header counts ${h.pageCount} pages of ${h.pageSize} bytes (${expected} bytes), the file has ${st.size}`,
    );
  }
  const journal = `${from}-journal`;
  if ((companionSize(journal) ?? 0) >= JOURNAL_MAGIC.length && readHead(journal, 8).equals(JOURNAL_MAGIC)) {
    throw fail(
      'INVALID_ARGUMENT',
      `cannot import ${from}: it has a hot journal (${journal}): a writer crashed or is still mid-transaction`,
      {
        hint: `let the writer finish, or open the file once with sqlite3 to roll the interrupted transaction back, then retry`,
      },
    );
  }
  return h;
}

/**
 * Where to read the source from without leaving anything beside it: a WAL-mode file with no -shm has no live
 * connection, but opening it would create a -shm (and maybe a -wal) next to it, so its main file and -wal are read
 * from a private copy instead. Anything else is read in place, read-only.
 */
async function readablePath(from: string, h: DbHeader, dir: string): Promise<string> {
  if (!isWalMode(h) || companionSize(`${from}-shm`) !== undefined) return from;
  const copy = join(dir, 'source.db');
  await copyFile(from, copy);
  if (companionSize(`${from}-wal`) !== undefined) await copyFile(`${from}-wal`, `${copy}-wal`);
  return copy;
}

async function importCopy(ctx: OpsContext, from: string, dest: string, dir: string): Promise<void> {
  const header = checkSource(from);
  const path = await readablePath(from, header, dir);
  const hint = 'import an intact copy (with its -wal, if it has one); the source was left untouched';
  let src: SqliteDatabase;
  try {
    src = openDatabase(path, { readonly: true, fileMustExist: true });
    src.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (err) {
    throw (
      corruptDatabase(err, from, hint) ??
      unreadable(from, (err as Error).message, 'pass the path of an existing SQLite database file', err)
    );
  }
  const bar = ctx.progress?.();
  const pageSize = Number(src.pragma('page_size', { simple: true }));
  try {
    // The backup API copies one consistent transaction-boundary state, -wal included, without writing the source.
    let started = false;
    await src.backup(dest, {
      progress: ({ totalPages, remainingPages }) => {
        if (bar) {
          if (!started) bar.start(`import ${from}`, totalPages * pageSize);
          started = true;
          bar.update((totalPages - remainingPages) * pageSize);
        }
      },
    });
  } catch (err) {
    throw corruptDatabase(err, from, hint) ?? err;
  } finally {
    bar?.stop();
    src.close();
  }
  quickCheck(from, dest, hint);
}

/** Refuses an imported copy that fails `PRAGMA quick_check` (read on our private copy, never the source). */
function quickCheck(from: string, copy: string, hint: string): void {
  const db = openDatabase(copy, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma('quick_check(5)', { simple: false }) as Array<{ quick_check: string }>;
    const problems = rows.map((r) => r.quick_check).filter((m) => m !== 'ok');
    if (problems.length > 0) throw corruptSource(from, `it fails quick_check: ${problems.join('; ')}`);
  } catch (err) {
    throw corruptDatabase(err, from, hint) ?? err;
  } finally {
    db.close();
  }
}

/**
 * `offshoot create <db> [--from file.db]`: a new database whose main branch (protected) starts at a txid-1 snapshot
 * with checkpoint `init` — empty, or imported from an existing file, which is never modified (nor anything created
 * beside it). A source that is empty, truncated, malformed or fails `quick_check` is refused with CORRUPT; a
 * directory or a file with a hot journal with INVALID_ARGUMENT.
 */
export async function create(ctx: OpsContext, db: string, opts: { from?: string } = {}): Promise<CreateResult> {
  validateName('database', db);
  if ((await ctx.store.listBranches(db)).length > 0) {
    throw fail('ALREADY_EXISTS', `database ${db} already exists`, {
      hint: `pick another name, or work on a branch of it: offshoot fork ${db} <branch>`,
    });
  }
  return withTempDir(ctx, async (dir) => {
    const file = join(dir, 'import.db');
    if (opts.from !== undefined) await importCopy(ctx, opts.from, file, dir);
    const conn = openDatabase(file);
    try {
      conn.pragma('journal_mode = WAL');
      conn.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      conn.close();
    }
    const lineage = newLineageId();
    const ltx = join(dir, 'snapshot.ltx');
    const snap = await encodeSnapshotFromDb(file, ltx, { txid: 1, timestamp: ctx.now().getTime() });
    await ctx.store.putData(snapshotKey(lineage, 1, 1), { file: ltx });
    const now = ctx.now().toISOString();
    const ref: Ref = {
      schema: 2,
      lineage,
      epoch: 1,
      head_txid: 1,
      head_epoch: 1,
      checkpoints: { init: { txid: 1, epoch: 1, created_at: now } },
      protected: true,
      touched_at: now,
    };
    await ctx.store.createRef(
      db,
      MAIN_BRANCH,
      await logged(ctx, db, MAIN_BRANCH, 'create', undefined, ref, { name: 'init' }),
    );
    return { db, branch: MAIN_BRANCH, txid: 1, pageSize: snap.pageSize, pages: snap.commit };
  });
}
