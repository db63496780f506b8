import { compact } from '../../ops/compact.js';
import { requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/** `compact` db, branch → txid: makes a shared branch self-contained; refused while a session owns it. */
export const compactOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  d.sessions.refuseIfPresent(t, 'compact');
  const r = await compact(d.ops, t, { actor: requestActor(req) });
  return { ok: true, txid: r.txid };
};
