import type { Target } from '../../core/target.js';
import { readBranch } from '../../ops/helpers/branch/branch-ref.js';
import { type Actor, refuseUndoPointChange } from '../../ops/helpers/safety/policy.js';
import { optionalCheckpoint, requestTarget, requestActor } from '../request-fields.js';
import { flushLive } from '../session-lifecycle.js';
import type { OpHandler } from './op-handler.js';

/** Refuses an agent's flush into the undo point of a protected branch (the human's way back), as at rest. */
export async function refuseAgentFlush(d: Parameters<OpHandler>[1], t: Target, actor: Actor): Promise<void> {
  if (actor.kind !== 'agent') return;
  const { ref } = await readBranch(d.ops, t.db, t.branch);
  await refuseUndoPointChange(
    d.ops,
    t.db,
    t.branch,
    ref,
    actor,
    'checkpointing into',
    `offshoot session flush ${t.db}@${t.branch}`,
  );
}

/** `flush` db, branch, name?, meta? → txid: makes the session's captured writes durable, optionally named. */
export const flushOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const slot = d.sessions.open(t);
  await refuseAgentFlush(d, t, requestActor(req));
  const name = optionalCheckpoint(req);
  const r = await flushLive(slot, {
    kind: 'manual',
    ...(name !== undefined ? { name } : {}),
    ...(req.meta !== undefined ? { meta: req.meta } : {}),
  });
  return { ok: true, txid: r.txid };
};
