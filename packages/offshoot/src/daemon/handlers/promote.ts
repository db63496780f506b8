import { promote } from '../../ops/promote.js';
import { requestActor, requestTarget, requiredName } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { warningsOf } from './op-warnings.js';
import { flushSourceSession } from './source-flush.js';

/**
 * `promote` db, branch=src, name=target, force → txid, and additively `result` (the undo point, the target's
 * checkout, whether it was refreshed, whether the source was live elsewhere). A target with a session here is
 * refused (promote repoints it); a source with one is flushed first, so what is promoted includes its captured
 * writes. What the promote warned of (writes kept in an undo branch, a checkout left stale) is in `warnings`.
 */
export const promoteOp: OpHandler = async (req, d) => {
  const src = requestTarget(req);
  const onto = requiredName(req, 'branch', 'target branch');
  d.sessions.refuseIfPresent({ db: src.db, branch: onto }, 'promote onto');
  const actor = requestActor(req);
  await flushSourceSession(d, src, actor, 'promote');
  const w = warningsOf(d.ops);
  const r = await promote(w.ops, src, onto, { force: req.force ?? false, actor });
  return {
    ok: true,
    txid: r.txid,
    result: {
      txid: r.txid,
      backup: r.backup,
      checkout: r.path,
      refreshed: r.refreshed,
      source_live: r.sourceLive,
      ...(r.refreshError ? { refresh_error: r.refreshError.message } : {}),
    },
    ...w.field(r.refreshError),
  };
};
