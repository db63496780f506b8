import { destroy } from '../../ops/destroy.js';
import { requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { warningsOf } from './op-warnings.js';

/**
 * `destroy` db, branch, force, and additively `result` (whether a checkout was removed): deletes the branch; refused
 * while a session here owns it, whatever force says.
 */
export const destroyOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  d.sessions.refuseIfPresent(t, 'destroy');
  const w = warningsOf(d.ops);
  const r = await destroy(w.ops, t, { force: req.force ?? false, actor: requestActor(req) });
  return { ok: true, result: { removed_checkout: r.removedCheckout }, ...w.field() };
};
