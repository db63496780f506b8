import { parseDuration } from '../../core/duration.js';
import { fail } from '../../core/errors.js';
import { runGc } from '../../ops/gc.js';
import { announceReaped } from '../reaped.js';
import type { OpHandler } from './op-handler.js';

/** `gc` grace? → result: reap expired branches, clear stale claims, collect garbage (grace defaults to -gc-grace). */
export const gcOp: OpHandler = async (req, d) => {
  const grace = req.grace === undefined || req.grace === '' ? d.options.gcGrace : parseDuration(req.grace);
  if (grace < 0n)
    throw fail('INVALID_ARGUMENT', 'gc: grace must not be negative', {
      hint: 'use 0 or a positive duration such as 1h',
    });
  const r = await d.maintenance.run(() => runGc(d.durable, { grace }));
  announceReaped(d, r.reaped);
  d.metrics.gcPass(r);
  return {
    ok: true,
    result: {
      reaped: r.reaped,
      postponed: r.postponed,
      reap_errors: r.reapErrors,
      cleared_claims: r.clearedClaims,
      tombstoned: r.tombstoned,
      deleted: r.deleted,
      backlog: r.backlog,
      temporaries: r.temporaries,
    },
  };
};
