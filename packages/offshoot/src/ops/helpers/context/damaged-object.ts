import { hasCode, OffshootError } from '../../../core/errors.js';
import type { DataObject } from '../../../core/keys.js';
import type { OpsContext } from './context.js';

/** A store object that failed verification while a chain was applied: the error names the object. */
export class DamagedObjectError extends OffshootError {
  constructor(
    readonly object: DataObject,
    cause: OffshootError,
  ) {
    super(cause.code, `object ${object.key} is damaged: ${cause.message}`, {
      ...(cause.hint !== undefined ? { hint: cause.hint } : {}),
      cause,
    });
  }
}

/** True for the verification failures a damaged object raises. */
export function isDamage(err: unknown): err is OffshootError {
  return hasCode(err, 'CORRUPT') || hasCode(err, 'CHECKSUM_MISMATCH');
}

/**
 * Runs fn, which reads the state of db@branch; a damaged object is reported with the branch it was read for and the
 * way back: `rollback --to` the newest checkpoint whose state does not read that object (its txid is below the
 * object's), when the branch has one.
 */
export async function explainDamage<T>(
  ctx: OpsContext,
  t: { db: string; branch: string },
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof DamagedObjectError)) throw err;
    const ref = (await ctx.store.tryGetRef(t.db, t.branch).catch(() => undefined))?.ref;
    const earlier = Object.entries(ref?.checkpoints ?? {})
      .filter(([, c]) => c.txid < err.object.minTxid)
      .sort(([, a], [, b]) => b.txid - a.txid)[0]?.[0];
    const name = `${t.db}@${t.branch}`;
    const hint =
      earlier === undefined
        ? `restore ${err.object.key} from a backup; no checkpoint of ${name} predates it`
        : `roll back past it with 'offshoot rollback ${name} --to ${earlier}', or restore ${err.object.key} from a backup`;
    throw new OffshootError(err.code, `${name}: ${err.message}`, { hint, cause: err });
  }
}
