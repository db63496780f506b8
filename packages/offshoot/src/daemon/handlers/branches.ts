import { fail } from '../../core/errors.js';
import { validateName } from '../../core/names.js';
import { status } from '../../ops/status.js';
import { branchInfo, daemonState } from '../branch-info.js';
import type { OpHandler } from './op-handler.js';

/** `branches` db → branches[]: every branch with its state (this daemon's error/pending first); unknown db fails (in status). */
export const branchesOp: OpHandler = async (req, d) => {
  if (req.db === undefined || req.db === '')
    throw fail('INVALID_ARGUMENT', 'branches: db is required', { hint: 'set "db" in the request' });
  const db = validateName('database', req.db);
  const report = await status(d.ops, { db });
  const branches = report.branches.map((b) =>
    branchInfo(b, daemonState(b.state, d.sessions.get({ db, branch: b.branch }))),
  );
  const unreadable = report.unreadable.map((u) => ({ branch: u.branch, code: u.code, error: u.error }));
  return { ok: true, branches, ...(unreadable.length > 0 ? { unreadable } : {}) };
};
