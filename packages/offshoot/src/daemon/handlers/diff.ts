import { fail, hasCode } from '../../core/errors.js';
import { parseTarget } from '../../core/target.js';
import { DIFF_SERVER_BYTES, diff } from '../../ops/diff.js';
import { diffToJson } from '../../sqlite/diff/diff-json.js';
import { optionalCheckpoint, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/**
 * `diff` db, branch, name=cp (the left side), to=`db[@branch[@cp]]` (the right side), summary, table → result: a
 * row-level diff of two durable states, read without a lease. A diff whose rows would not fit in one response fails
 * TOO_LARGE, naming summary and table.
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
    ...(req.table !== undefined && req.table !== '' ? { tables: [req.table] } : {}),
    maxBytes: DIFF_SERVER_BYTES,
  }).catch((err: unknown) => {
    if (!hasCode(err, 'TOO_LARGE')) throw err;
    throw fail('TOO_LARGE', err.message, {
      hint: 'ask for counts only ("summary": true), one table at a time ("table": "<name>"), or two checkpoints closer together',
      cause: err,
    });
  });
  return { ok: true, result: diffToJson(r) };
};
