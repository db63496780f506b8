import { fail } from '../../core/errors.js';
import { query } from '../../ops/query.js';
import { optionalPoint, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/**
 * `query` db, branch, name=cp?, sql, limit? → result {source, columns, rows, truncated}: one read-only statement
 * against the branch's checkout (or durable head) or a checkpoint, in a child process with a time limit.
 */
export const queryOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const at = optionalPoint(req);
  if (req.sql === undefined || req.sql.trim() === '')
    throw fail('INVALID_ARGUMENT', 'query: sql is required', { hint: 'set "sql" to one read-only statement' });
  const r = await query(d.ops, t, req.sql, {
    ...(at !== undefined ? { at } : {}),
    ...(req.limit !== undefined ? { limit: req.limit } : {}),
  });
  return { ok: true, result: { source: r.source, columns: r.columns, rows: r.rows, truncated: r.truncated } };
};
