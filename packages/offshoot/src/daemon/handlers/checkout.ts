import { checkout, checkoutLive } from '../../ops/checkout.js';
import { requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/**
 * `checkout` db, branch → checkout, and additively `result` (the head txid it holds, whether an existing file was
 * reused, whether it holds uncheckpointed writes, the undo point that kept them when the branch moved): the writable
 * checkout, refused while a session (here or elsewhere) owns it. With `live` (and no `discard`), a healthy session
 * open here on the branch answers its live path instead (`live: true`): as writable as a checkout, so the checkout
 * verb decides by the same rule whether an agent may have it.
 */
export const checkoutOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const actor = requestActor(req);
  const slot = req.live === true && req.discard !== true ? d.sessions.get(t) : undefined;
  if (slot !== undefined && slot.state === 'open' && slot.session.error === undefined) {
    const r = await checkoutLive(d.ops, t, slot.session.path, actor);
    const txid = slot.session.info().durable_txid;
    return { ok: true, checkout: r.path, live: true, result: { txid, reused: true, dirty: false } };
  }
  d.sessions.refuseIfPresent(t, 'checkout');
  const r = await checkout(d.ops, t, { discard: req.discard ?? false, actor });
  const warnings: string[] = [];
  if (r.dirty)
    warnings.push(
      `${r.path} holds writes no checkpoint has recorded yet (kept): checkpoint them, or check out with discard to drop them`,
    );
  if (r.kept !== undefined)
    warnings.push(
      `${t.db}@${t.branch} moved under its checkout; its uncheckpointed writes are kept as ${t.db}@${r.kept}`,
    );
  return {
    ok: true,
    checkout: r.path,
    result: { txid: r.txid, reused: r.reused, dirty: r.dirty, ...(r.kept !== undefined ? { kept: r.kept } : {}) },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
};
