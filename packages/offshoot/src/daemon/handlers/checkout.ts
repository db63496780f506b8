import { readBranch, refuseForeignLease } from '../../ops/helpers/branch/branch-ref.js';
import { checkout } from '../../ops/checkout.js';
import { requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/** `checkout` db, branch → checkout: the writable checkout, refused while a session (here or elsewhere) owns it. */
export const checkoutOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  d.sessions.refuseIfPresent(t, 'checkout');
  const { ref } = await readBranch(d.ops, t.db, t.branch);
  refuseForeignLease(d.ops, t.db, t.branch, ref, 'checkout');
  const r = await checkout(d.ops, t);
  return { ok: true, checkout: r.path };
};
