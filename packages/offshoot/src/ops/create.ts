import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { fail } from '../core/errors.js';
import { snapshotKey } from '../core/keys.js';
import { newLineageId } from '../core/lineage.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import { MAIN_BRANCH } from '../core/target.js';
import { encodeSnapshotFromDb } from '../ltx/encoder.js';
import type { OpsContext } from './helpers/context.js';
import { withTempDir } from './helpers/temp-dir.js';
import { openDatabase } from '../sqlite/sqlite-driver.js';

/** What create made. */
export interface CreateResult {
  db: string;
  branch: string;
  txid: number;
  pageSize: number;
  pages: number;
}

async function importCopy(ctx: OpsContext, from: string, dest: string): Promise<void> {
  let src: Database.Database;
  try {
    src = openDatabase(from, { readonly: true, fileMustExist: true });
    src.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (err) {
    throw fail('INVALID_ARGUMENT', `cannot import ${from}: ${(err as Error).message}`, {
      hint: 'pass the path of an existing SQLite database file',
      cause: err,
    });
  }
  const bar = ctx.progress?.();
  try {
    // The backup API copies one consistent transaction-boundary state, -wal included, without writing the source.
    let started = false;
    await src.backup(dest, {
      progress: ({ totalPages, remainingPages }) => {
        if (bar) {
          if (!started) bar.start(`import ${from}`, totalPages);
          started = true;
          bar.update(totalPages - remainingPages);
        }
        return 1024;
      },
    });
  } finally {
    bar?.stop();
    src.close();
  }
}

/**
 * `offshoot create <db> [--from file.db]`: a new database whose main branch (protected) starts at a txid-1 snapshot
 * with checkpoint `init` — empty, or imported from an existing file, which is never modified.
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
    if (opts.from !== undefined) await importCopy(ctx, opts.from, file);
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
    await ctx.store.createRef(db, MAIN_BRANCH, ref);
    return { db, branch: MAIN_BRANCH, txid: 1, pageSize: snap.pageSize, pages: snap.commit };
  });
}
