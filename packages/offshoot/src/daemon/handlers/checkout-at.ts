import { checkoutAt } from '../../ops/checkout-at.js';
import { requestTarget, requiredPoint } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/** `checkout-at` db, branch, name=cp, force → checkout: an immutable checkpoint checkout; safe beside a session. */
export const checkoutAtOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const cp = requiredPoint(req, 'checkpoint');
  const r = await checkoutAt(d.ops, t, cp, { force: req.force ?? false });
  return { ok: true, checkout: r.path };
};
