import { readBranch, refuseForeignLease } from '../../ops/helpers/branch/branch-ref.js';
import { checkout } from '../../ops/checkout.js';
import { requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/** `checkout` db, branch → checkout: the writable checkout, refused while a session (here or elsewhere) owns it. */
export const checkoutOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  d.sessions.refuseIfPresent(t, 'checkout');
  const { ref } = await readBranch(d.ops, t.db, t.branch);
  await refuseForeignLease(d.ops, t.db, t.branch, ref, 'checkout');
  const r = await checkout(d.ops, t, { discard: req.discard ?? false, actor: requestActor(req) });
  const warnings: string[] = [];
  if (r.dirty)
    warnings.push(
      `${r.path} holds writes no checkpoint has recorded yet (kept): checkpoint them, or check out with discard to drop them`,
    );
  if (r.kept !== undefined)
    warnings.push(
      `${t.db}@${t.branch} moved under its checkout; its uncheckpointed writes are kept as ${t.db}@${r.kept}`,
    );
  return { ok: true, checkout: r.path, ...(warnings.length > 0 ? { warnings } : {}) };
};
