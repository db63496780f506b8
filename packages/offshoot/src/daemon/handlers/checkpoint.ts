import { checkpoint } from '../../ops/checkpoint.js';
import { requestActor, requestTarget, requiredName } from '../request-fields.js';
import { flushLive } from '../session-lifecycle.js';
import type { OpHandler } from './op-handler.js';
import { askedBy } from './asked-by.js';

/**
 * `checkpoint` db, branch, name, meta? → txid, result {kind}: names the branch's current state durably. With a
 * session open here on the branch it is that session's flush (kind `live`); otherwise an at-rest checkpoint of the
 * branch's checkout under this daemon's lease (refused while another holder's lease is live).
 */
export const checkpointOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const name = requiredName(req, 'checkpoint', 'checkpoint name');
  const meta = req.meta === undefined ? {} : { meta: req.meta };
  const actor = requestActor(req);
  if (d.sessions.get(t) !== undefined) {
    const r = await flushLive(d, d.sessions.open(t), { kind: 'manual', actor, name, ...meta, ...askedBy(d) });
    return { ok: true, txid: r.txid, result: { kind: 'live' } };
  }
  const started = performance.now();
  const r = await checkpoint(d.ops, t, name, req.meta, { actor });
  d.metrics.checkpointed((performance.now() - started) / 1000);
  return { ok: true, txid: r.txid, result: { kind: r.kind } };
};
