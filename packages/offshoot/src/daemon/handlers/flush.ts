import type { Target } from '../../core/target.js';
import { readBranch } from '../../ops/helpers/branch/branch-ref.js';
import { type Actor, vetWrite } from '../../ops/helpers/safety/policy.js';
import { optionalCheckpoint, requestTarget, requestActor } from '../request-fields.js';
import { flushLive } from '../session-lifecycle.js';
import type { OpHandler } from './op-handler.js';
import { askedBy } from './asked-by.js';

/**
 * Refuses an agent's flush into the undo point of a protected branch (the human's way back), by the rule of every
 * write into a branch (as at rest): its own flush, a checkpoint, or the flush of a source it forks or promotes.
 */
export async function refuseAgentFlush(d: Parameters<OpHandler>[1], t: Target, actor: Actor): Promise<void> {
  if (actor.kind !== 'agent') return;
  const { ref } = await readBranch(d.ops, t.db, t.branch);
  await vetWrite(d.ops, t, actor, 'explicit', `offshoot session flush ${t.db}@${t.branch}`)(ref);
}

/** `flush` db, branch, name?, meta? → txid: makes the session's captured writes durable, optionally named. */
export const flushOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const slot = d.sessions.open(t);
  await refuseAgentFlush(d, t, requestActor(req));
  const name = optionalCheckpoint(req);
  const r = await flushLive(d, slot, {
    kind: 'manual',
    ...(name !== undefined ? { name } : {}),
    ...(req.meta !== undefined ? { meta: req.meta } : {}),
    ...askedBy(d),
  });
  return { ok: true, txid: r.txid };
};
