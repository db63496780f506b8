import { readBranch } from '../../ops/helpers/branch/branch-ref.js';
import { refuseAgentCheckout } from '../../ops/helpers/safety/policy.js';
import { requestActor, requestTarget } from '../request-fields.js';
import { openSession } from '../session-lifecycle.js';
import type { OpHandler } from './op-handler.js';

/**
 * `open` db, branch → checkout: leases the branch, checks it out and starts live capture; `warnings` names the undo
 * branch that kept writes an earlier session never flushed. An agent may not open the undo point of a protected
 * branch (a session is a writable checkout).
 */
export const openOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const actor = requestActor(req);
  if (actor.kind === 'agent')
    await refuseAgentCheckout(d.ops, t.db, t.branch, (await readBranch(d.ops, t.db, t.branch)).ref, actor, false);
  const slot = await openSession(d, t);
  const { warnings } = slot.session;
  return { ok: true, checkout: slot.session.path, ...(warnings.length > 0 ? { warnings: [...warnings] } : {}) };
};
