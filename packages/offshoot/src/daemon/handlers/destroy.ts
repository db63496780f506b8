import { destroy } from '../../ops/destroy.js';
import { requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { warningsOf } from './op-warnings.js';

/**
 * `destroy` db, branch, force, and additively `result` (whether a checkout was removed, and what it held that no
 * checkpoint had): deletes the branch; refused while a session here owns it, whatever force says. An agent is refused
 * a checkout holding such writes without force (and allow_force).
 */
export const destroyOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  d.sessions.refuseIfPresent(t, 'destroy');
  const w = warningsOf(d.ops);
  const r = await destroy(w.ops, t, { force: req.force ?? false, actor: requestActor(req) });
  const discarded = r.discarded;
  return {
    ok: true,
    result: {
      removed_checkout: r.removedCheckout,
      ...(discarded !== undefined
        ? {
            discarded: {
              reason: discarded.reason,
              ...(discarded.sinceTxid !== undefined ? { since_txid: discarded.sinceTxid } : {}),
              last_write: discarded.lastWrite,
              wal_bytes: discarded.walBytes,
            },
          }
        : {}),
    },
    ...w.field(),
  };
};
