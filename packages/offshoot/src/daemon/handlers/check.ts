import { fail } from '../../core/errors.js';
import { checkDestroy } from '../../ops/destroy.js';
import { checkMerge } from '../../ops/merge.js';
import { checkPromote } from '../../ops/promote.js';
import { checkRollback } from '../../ops/rollback.js';
import { validateName } from '../../core/names.js';
import { validatePointName } from '../../core/target.js';
import { optionalCheckpoint, requestActor, requestIfHead, requestTarget, requiredName } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { checkSourceSession } from './source-flush.js';

/** The verbs a `check` request may name. */
const VERBS = ['rollback', 'promote', 'merge', 'destroy'] as const;

/**
 * `check` verb, and that verb's own fields → `result: {verb, allowed: true}`, or the refusal the verb would answer
 * now: every refusal the verb applies for who asks (the sessions here, the safety policy, leases, undo slots), with
 * nothing changed. A caller that asks its human before a call (`@offshoot/ai-sdk`'s approval) learns from it whether
 * this call would be refused with a refusal the human may lift (`human_can_allow`). An op of its own, not a field of
 * the verb's request: a daemon that does not know it refuses it, where one ignoring a field would run the verb.
 */
export const checkOp: OpHandler = async (req, d) => {
  const actor = requestActor(req);
  const t = requestTarget(req);
  switch (req.verb) {
    case 'rollback': {
      const cp = requiredName(req, 'checkpoint', 'checkpoint to roll back to');
      d.sessions.refuseIfPresent(t, 'rollback');
      await checkRollback(d.ops, t, cp, { actor });
      break;
    }
    case 'promote': {
      const onto = requiredName(req, 'branch', 'target branch');
      d.sessions.refuseIfPresent({ db: t.db, branch: onto }, 'promote onto');
      await checkSourceSession(d, t, actor, 'promote');
      const ifHead = requestIfHead(req);
      await checkPromote(d.ops, t, onto, {
        force: req.force ?? false,
        actor,
        ...(ifHead !== undefined ? { ifHead } : {}),
      });
      break;
    }
    case 'merge': {
      if (req.into === undefined || req.into === '')
        throw fail('INVALID_ARGUMENT', 'check: a merge needs into', { hint: 'set "into" to the branch to merge into' });
      const into = validateName('branch', req.into);
      d.sessions.refuseIfPresent({ db: t.db, branch: into }, 'merge into');
      // As the merge op: a source named at a point is a durable state, so its session is not asked.
      if (req.from !== undefined && req.from !== '') t.checkpoint = validatePointName(req.from);
      else await checkSourceSession(d, t, actor, 'merge');
      const name = optionalCheckpoint(req);
      await checkMerge(d.ops, t, into, {
        force: req.force ?? false,
        actor,
        ...(req.resolved !== undefined ? { resolved: req.resolved } : {}),
        ...(name !== undefined ? { name } : {}),
      });
      break;
    }
    case 'destroy':
      d.sessions.refuseIfPresent(t, 'destroy');
      await checkDestroy(d.ops, t, { force: req.force ?? false, actor });
      break;
    default:
      throw fail('INVALID_ARGUMENT', `check: verb ${JSON.stringify(req.verb ?? '')} is not one a check answers`, {
        hint: `set "verb" to one of ${VERBS.join(', ')}`,
      });
  }
  return { ok: true, result: { verb: req.verb, allowed: true } };
};
