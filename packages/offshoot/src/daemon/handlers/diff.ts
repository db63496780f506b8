import { fail } from '../../core/errors.js';
import { parseTarget } from '../../core/target.js';
import { diff } from '../../ops/diff.js';
import { diffToJson } from '../../sqlite/diff/diff-json.js';
import { optionalCheckpoint, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/**
 * `diff` db, branch, name=cp (the left side), to=`db[@branch[@cp]]` (the right side), summary → result: a row-level
 * diff of two durable states, read without a lease.
 */
export const diffOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const cp = optionalCheckpoint(req);
  if (req.to === undefined || req.to === '')
    throw fail('INVALID_ARGUMENT', 'diff: to is required', {
      hint: 'set "to" to the right side as db[@branch[@checkpoint]]',
    });
  const right = parseTarget(req.to, { allowCheckpoint: true });
  const r = await diff(d.ops, cp === undefined ? t : { ...t, checkpoint: cp }, right, {
    summaryOnly: req.summary ?? false,
  });
  return { ok: true, result: diffToJson(r) };
};
