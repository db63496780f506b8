import { requestTarget } from '../request-fields.js';
import { openSession } from '../session-lifecycle.js';
import type { OpHandler } from './op-handler.js';

/** `open` db, branch → checkout: leases the branch, checks it out and starts live capture. */
export const openOp: OpHandler = async (req, d) => {
  const slot = await openSession(d, requestTarget(req));
  return { ok: true, checkout: slot.session.path };
};
