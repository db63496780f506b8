import { fail } from '../core/errors.js';
import { formatDuration, type TtlArg } from '../core/duration.js';
import type { Target } from '../core/target.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import type { OpsContext } from './helpers/context/context.js';
import { readBranch } from './helpers/branch/branch-ref.js';
import { expiryOf, expiryText } from './helpers/branch/expiry.js';
import { readLiveness } from './helpers/branch/lease-liveness.js';
import { type Actor, HUMAN, refuseAgentTtl } from './helpers/safety/policy.js';
import { logged } from './helpers/history/record.js';

/** What touch left: the TTL in force (canonical, or undefined for none) and the new activity time. */
export interface TouchResult {
  db: string;
  branch: string;
  ttl: string | undefined;
  touchedAt: string;
  /** When the branch may now be reaped (RFC 3339), by the reaper's rule; undefined without a TTL or while protected. */
  expiresAt: string | undefined;
}

/** `offshoot touch db[@b] [--ttl d|none]`: restarts the TTL clock, optionally setting or clearing the TTL. */
export function touch(
  ctx: OpsContext,
  t: Target,
  ttl: TtlArg = { kind: 'keep' },
  opts: { actor?: Actor } = {},
): Promise<TouchResult> {
  return withBranchLease(ctx, t, () => touchLeased(ctx, t, ttl, opts.actor ?? HUMAN));
}

async function touchLeased(ctx: OpsContext, t: Target, ttl: TtlArg, actor: Actor): Promise<TouchResult> {
  if (ttl.kind === 'set' && ttl.ttl <= 0n)
    throw fail('INVALID_ARGUMENT', 'a TTL must be positive', {
      hint: 'use a positive duration such as 1h, or none to clear it',
    });
  if (actor.kind === 'agent')
    await refuseAgentTtl(ctx, t.db, t.branch, (await readBranch(ctx, t.db, t.branch)).ref, ttl, actor);
  const now = ctx.now().toISOString();
  const { ref } = await ctx.store.updateRef(t.db, t.branch, (r) => {
    if (r.reaping || r.deleting)
      throw fail('CAS_CONFLICT', `${t.db}@${t.branch} is being reaped; too late to touch`, {
        hint: 'the branch is about to be destroyed',
      });
    const next = { ...r, touched_at: now };
    if (ttl.kind === 'none') delete next.ttl;
    if (ttl.kind === 'set') next.ttl = formatDuration(ttl.ttl);
    return logged(ctx, t.db, t.branch, 'touch', r, next, ttl.kind === 'keep' ? {} : { ttl: next.ttl ?? 'none' });
  });
  return {
    db: t.db,
    branch: t.branch,
    ttl: ref.ttl,
    touchedAt: now,
    expiresAt: expiryText(expiryOf(ref, await readLiveness(ctx, [ref]), ctx.holder)),
  };
}
