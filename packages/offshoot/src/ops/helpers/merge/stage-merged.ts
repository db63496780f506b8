import { rm } from 'node:fs/promises';
import { fail } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';
import { openDatabase } from '../../../sqlite/sqlite-driver.js';
import { discardStaged, stageCheckout, type StagedCheckout } from '../checkout/install-checkout.js';
import type { OpsContext } from '../context/context.js';

/**
 * Applies a merge's SQL to the database at `path` in one transaction, its WAL folded back into the file. A constraint
 * the merged rows break (a UNIQUE value both sides gave different rows, a foreign key) rolls it back and fails
 * MERGE_CONFLICT: the file is then as it was.
 */
export function applyMerged(path: string, sql: string, what: string, target: string): void {
  const conn = openDatabase(path, { fileMustExist: true });
  try {
    conn.exec(sql);
    conn.pragma('wal_checkpoint(TRUNCATE)');
  } catch (err) {
    if (conn.inTransaction) conn.exec('ROLLBACK');
    throw fail(
      'MERGE_CONFLICT',
      `${what}: the merged rows break a constraint of ${target} (${(err as Error).message}); nothing was merged`,
      {
        hint: 'change the rows on one side so they no longer clash (a UNIQUE value, a foreign key), then merge again',
        cause: err,
      },
    );
  } finally {
    conn.close();
  }
}

/**
 * The target's head staged privately beside its checkout path (stageCheckout: a clone of the cache entry where the
 * filesystem can) with the merge applied (applyMerged): nothing at the checkout path or in the store has changed
 * yet. For a target with no clean checkout at its head to apply the merge in place.
 */
export async function stageMerged(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  sql: string,
  what: string,
): Promise<StagedCheckout> {
  const staged = await stageCheckout(ctx, db, branch, ref, what);
  try {
    applyMerged(staged.tmp, sql, what, `${db}@${branch}`);
    await Promise.all([rm(`${staged.tmp}-wal`, { force: true }), rm(`${staged.tmp}-shm`, { force: true })]);
    return staged;
  } catch (err) {
    await discardStaged(staged);
    throw err;
  }
}

/** Removes a placed checkout and its sidecars, so the next checkout materializes the head again. */
export async function dropCheckout(path: string): Promise<void> {
  await rm(path, { force: true });
  for (const suffix of ['-wal', '-shm', '.sum', '.pages']) await rm(`${path}${suffix}`, { force: true });
}
