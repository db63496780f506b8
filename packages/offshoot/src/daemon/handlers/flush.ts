import { optionalCheckpoint, requestTarget, requestActor } from '../request-fields.js';
import { flushLive } from '../session-lifecycle.js';
import type { OpHandler } from './op-handler.js';
import { askedBy } from './asked-by.js';

/**
 * `flush` db, branch, name?, meta? → txid: makes the session's captured writes durable, optionally named. The flush
 * verb decides whether the actor may write into the branch (an agent never flushes into the undo point of a protected
 * branch, the human's way back).
 */
export const flushOp: OpHandler = async (req, d) => {
  const slot = d.sessions.open(requestTarget(req));
  const name = optionalCheckpoint(req);
  const r = await flushLive(d, slot, {
    kind: 'manual',
    actor: requestActor(req),
    ...(name !== undefined ? { name } : {}),
    ...(req.meta !== undefined ? { meta: req.meta } : {}),
    ...askedBy(d),
  });
  return { ok: true, txid: r.txid };
};
