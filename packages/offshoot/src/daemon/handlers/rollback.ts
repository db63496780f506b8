import { rollback } from '../../ops/rollback.js';
import { requestActor, requestTarget, requiredPoint } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { warningsOf } from './op-warnings.js';

/**
 * `rollback` db, branch, name=cp → checkout, and additively `result` (the new head, the undo point, what was
 * abandoned, whether the checkout was refreshed, whether the branch is protected): repoints the branch at the checkpoint; refused while a session
 * owns it. What the rollback warned of (writes kept in an undo branch, a checkout left stale) is in `warnings`.
 */
export const rollbackOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const cp = requiredPoint(req, 'checkpoint to roll back to');
  d.sessions.refuseIfPresent(t, 'rollback');
  const w = warningsOf(d.ops);
  const r = await rollback(w.ops, t, cp, { actor: requestActor(req) });
  // Whether undoing it takes force, read after the rollback as the CLI reads it.
  const isProtected = (await d.ops.store.tryGetRef(t.db, t.branch))?.ref.protected ?? false;
  return {
    ok: true,
    checkout: r.path,
    result: {
      checkpoint: r.checkpoint,
      txid: r.txid,
      backup: r.backup,
      ...(r.earlierBackup !== undefined ? { earlier_backup: r.earlierBackup } : {}),
      abandoned: r.abandoned ?? null,
      refreshed: r.refreshed,
      protected: isProtected,
      ...(r.refreshError ? { refresh_error: r.refreshError.message } : {}),
    },
    ...w.field(r.refreshError),
  };
};
