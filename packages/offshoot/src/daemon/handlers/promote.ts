import { promote } from '../../ops/promote.js';
import { requestActor, requestIfHead, requestTarget, requiredName } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { warningsOf } from './op-warnings.js';
import { flushSourceSession } from './source-flush.js';

/**
 * `promote` db, branch=src, name=target, force, and additively if_head (promote only while the target is at that
 * head, else BASE_MOVED) → txid, and additively `result` (the undo point and where an earlier one was kept, the
 * target's checkout, whether it was refreshed, whether the source was live elsewhere). A target with a session here is
 * refused (promote repoints it); a source with one is flushed first, so what is promoted includes its captured
 * writes. What the promote warned of (writes kept in an undo branch, a checkout left stale) is in `warnings`.
 */
export const promoteOp: OpHandler = async (req, d) => {
  const src = requestTarget(req);
  const onto = requiredName(req, 'branch', 'target branch');
  d.sessions.refuseIfPresent({ db: src.db, branch: onto }, 'promote onto');
  const actor = requestActor(req);
  await flushSourceSession(d, src, actor, 'promote');
  const ifHead = requestIfHead(req);
  const w = warningsOf(d.ops);
  const r = await promote(w.ops, src, onto, {
    force: req.force ?? false,
    actor,
    ...(ifHead !== undefined ? { ifHead } : {}),
  });
  return {
    ok: true,
    txid: r.txid,
    result: {
      txid: r.txid,
      backup: r.backup,
      ...(r.earlierBackup !== undefined ? { earlier_backup: r.earlierBackup } : {}),
      // Echoed so a client knows the compare-and-swap was made (a daemon that ignores the field promotes anyway).
      ...(ifHead !== undefined ? { if_head: ifHead } : {}),
      checkout: r.path,
      refreshed: r.refreshed,
      source_live: r.sourceLive,
      ...(r.refreshError ? { refresh_error: r.refreshError.message } : {}),
    },
    ...w.field(r.refreshError),
  };
};
