import { fail } from '../../core/errors.js';
import { parseTarget } from '../../core/target.js';
import { DIFF_SERVER_BYTES, diff } from '../../ops/diff.js';
import { diffToJson } from '../../sqlite/diff/diff-json.js';
import { firstRows } from '../../sqlite/diff/row-window.js';
import { optionalPoint, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/**
 * `diff` db, branch, name=cp (the left side), to=`db[@branch[@cp]]` (the right side), summary, table, limit → result:
 * a row-level diff of two durable states, read without a lease. `limit` lists at most that many row changes of each
 * kind per table (`counts` then says how many there are). A diff whose listed rows would not fit in one response fails
 * TOO_LARGE, naming limit, table and summary.
 */
export const diffOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const cp = optionalPoint(req);
  if (req.to === undefined || req.to === '')
    throw fail('INVALID_ARGUMENT', 'diff: to is required', {
      hint: 'set "to" to the right side as db[@branch[@checkpoint]]',
    });
  if (req.limit !== undefined && (!Number.isSafeInteger(req.limit) || req.limit < 0))
    throw fail('INVALID_ARGUMENT', `diff: limit ${req.limit} is not a whole number of rows`, {
      hint: 'set "limit" to the most row changes of each kind listed per table, e.g. 100',
    });
  const right = parseTarget(req.to, { allowCheckpoint: true });
  const r = await diff(d.ops, cp === undefined ? t : { ...t, checkpoint: cp }, right, {
    summaryOnly: req.summary ?? false,
    ...(req.table !== undefined && req.table !== '' ? { tables: [req.table] } : {}),
    ...(req.limit !== undefined ? { rows: firstRows(req.limit) } : {}),
    maxBytes: DIFF_SERVER_BYTES,
  });
  return { ok: true, result: diffToJson(r) };
};
