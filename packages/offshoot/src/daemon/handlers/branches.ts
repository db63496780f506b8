import { fail } from '../../core/errors.js';
import { validateName } from '../../core/names.js';
import { status } from '../../ops/status.js';
import { branchInfo, daemonState } from '../branch-info.js';
import type { OpHandler } from './op-handler.js';

/**
 * `branches` db [state] [limit] → branches[]: every branch with its state (this daemon's error/pending first), only
 * those in one of `state` and at most `limit` of them (then `truncated` and `more`); unknown db fails (in status).
 */
export const branchesOp: OpHandler = async (req, d) => {
  if (req.db === undefined || req.db === '')
    throw fail('INVALID_ARGUMENT', 'branches: db is required', { hint: 'set "db" in the request' });
  const db = validateName('database', req.db);
  const report = await status(d.ops, {
    db,
    ...(req.state === undefined ? {} : { states: req.state }),
    ...(req.limit === undefined ? {} : { limit: req.limit }),
    stateOf: (_db, branch, atRest) => daemonState(atRest, d.sessions.get({ db, branch })),
  });
  const branches = report.branches.map((b) => branchInfo(b, b.state));
  const unreadable = report.unreadable.map((u) => ({ branch: u.branch, code: u.code, error: u.error }));
  return {
    ok: true,
    branches,
    ...(unreadable.length > 0 ? { unreadable } : {}),
    ...(report.truncated === undefined ? {} : { truncated: report.truncated, more: report.more }),
  };
};
