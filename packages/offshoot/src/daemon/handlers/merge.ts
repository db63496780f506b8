import { fail } from '../../core/errors.js';
import { validateName } from '../../core/names.js';
import { validatePointName } from '../../core/target.js';
import { merge, mergeToJson } from '../../ops/merge.js';
import { optionalCheckpoint, requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { warningsOf } from './op-warnings.js';
import { flushSourceSession } from './source-flush.js';

/**
 * `merge` db, branch=src, from (the source's checkpoint or moment, `tx:42` or `at:<RFC 3339>`; its head when
 * absent), into=target, prefer (`source`|`target`), resolved (the caller's rows for conflicts), name (the new
 * checkpoint), force → txid and `result`: the merge as JSON (mergeToJson), `applied: false` with the conflicts listed
 * when rows conflict and neither `resolved` nor `prefer` says how to resolve them (nothing changed). A target with a session here is refused (the merge writes its head); a source
 * head with one is flushed first, so what is merged includes its captured writes.
 */
export const mergeOp: OpHandler = async (req, d) => {
  const src = requestTarget(req);
  if (req.from !== undefined && req.from !== '') src.checkpoint = validatePointName(req.from);
  if (req.into === undefined || req.into === '')
    throw fail('INVALID_ARGUMENT', 'merge: into is required', { hint: 'set "into" to the branch to merge into' });
  const into = validateName('branch', req.into);
  const name = optionalCheckpoint(req);
  d.sessions.refuseIfPresent({ db: src.db, branch: into }, 'merge into');
  const actor = requestActor(req);
  // A source named at a point is a durable state already; its head may hold captured writes not yet flushed.
  if (src.checkpoint === undefined) await flushSourceSession(d, src, actor, 'merge');
  const w = warningsOf(d.ops);
  const r = await merge(w.ops, src, into, {
    force: req.force ?? false,
    actor,
    ...(req.prefer !== undefined ? { prefer: req.prefer } : {}),
    ...(req.resolved !== undefined ? { resolved: req.resolved } : {}),
    ...(name !== undefined ? { name } : {}),
  });
  return { ok: true, txid: r.txid, result: mergeToJson(r), ...w.field() };
};
