import { requestActor, requestTarget } from '../request-fields.js';
import { openSession } from '../session-lifecycle.js';
import type { OpHandler } from './op-handler.js';

/**
 * `open` db, branch → checkout: leases the branch, checks it out and starts live capture; `warnings` names the undo
 * branch that kept writes an earlier session never flushed. The open verb decides whether the actor may (a session
 * is a writable checkout: an agent may not open the undo point of a protected branch).
 */
export const openOp: OpHandler = async (req, d) => {
  const slot = await openSession(d, requestTarget(req), requestActor(req));
  const { warnings } = slot.session;
  return { ok: true, checkout: slot.session.path, ...(warnings.length > 0 ? { warnings: [...warnings] } : {}) };
};
