import { formatTarget, type Target } from '../core/target.js';
import { leaseLiveNow } from '../ops/branch-view.js';
import type { OpsContext } from '../ops/context.js';
import type { Invocation } from './command.js';
import { withDaemon } from './daemon-request.js';

/**
 * Before an at-rest promote reads a source under someone's live lease, flushes it through the daemon serving this
 * store when that daemon has a session on it, so the promote holds its writes so far (as the daemon's own promote
 * does). With no daemon to reach, or no session there, nothing happens and the promote reports the source live.
 */
export async function flushLiveSource(inv: Invocation, ctx: OpsContext, src: Target): Promise<void> {
  const got = await ctx.store.tryGetRef(src.db, src.branch);
  if (got === undefined || !(await leaseLiveNow(ctx, got.ref)) || got.ref.lease_holder === ctx.holder) return;
  const flushed = await withDaemon(inv, async (c) => {
    if (!(await c.status()).some((s) => s.db === src.db && s.branch === src.branch)) return false;
    await c.flush(src.db, src.branch);
    return true;
  }).catch(() => false);
  if (flushed) ctx.warn(`flushed the live session on ${formatTarget(src)} through the daemon before promoting it`);
}
