import { rollback } from '../../ops/rollback.js';
import { requestActor, requestTarget, requiredName } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/**
 * `rollback` db, branch, name=cp → checkout: repoints the branch at the checkpoint; refused while a session owns it.
 * A checkout left stale (busy) is reported in `warnings`.
 */
export const rollbackOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const cp = requiredName(req, 'checkpoint', 'checkpoint to roll back to');
  d.sessions.refuseIfPresent(t, 'rollback');
  const r = await rollback(d.ops, t, cp, { actor: requestActor(req) });
  return { ok: true, checkout: r.path, ...(r.refreshError ? { warnings: [r.refreshError.message] } : {}) };
};
