import { parseTime } from '../../core/moment.js';
import { logDocument, readLog } from '../../ops/log.js';
import { requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/**
 * `log` db, branch, since?, by?, limit? → result (the records, oldest first, as `offshoot log --json` prints them):
 * the history of a branch, or of the last incarnation of a destroyed one. Read-only; no lease.
 */
export const logOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const r = await readLog(d.ops, t, {
    ...(req.since !== undefined && req.since !== '' ? { since: parseTime(req.since, 'since') } : {}),
    ...(req.by !== undefined ? { actor: req.by } : {}),
    ...(req.limit !== undefined ? { limit: req.limit } : {}),
  });
  return { ok: true, result: logDocument(r) };
};
