import { destroy } from '../../ops/destroy.js';
import { requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/** `destroy` db, branch, force: deletes the branch; refused while a session here owns it, whatever force says. */
export const destroyOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  d.sessions.refuseIfPresent(t, 'destroy');
  await destroy(d.ops, t, { force: req.force ?? false, actor: requestActor(req) });
  return { ok: true };
};
