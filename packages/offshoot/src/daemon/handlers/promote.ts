import { promote } from '../../ops/promote.js';
import { requestActor, requestTarget, requiredName } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { flushSourceSession } from './source-flush.js';

/**
 * `promote` db, branch=src, name=target, force → txid. A target with a session here is refused (promote repoints
 * it); a source with one is flushed first, so what is promoted includes its captured writes. A target checkout left
 * stale (busy) is reported in `warnings`.
 */
export const promoteOp: OpHandler = async (req, d) => {
  const src = requestTarget(req);
  const onto = requiredName(req, 'branch', 'target branch');
  d.sessions.refuseIfPresent({ db: src.db, branch: onto }, 'promote onto');
  await flushSourceSession(d, src, 'promote');
  const r = await promote(d.ops, src, onto, { force: req.force ?? false, actor: requestActor(req) });
  return { ok: true, txid: r.txid, ...(r.refreshError ? { warnings: [r.refreshError.message] } : {}) };
};
