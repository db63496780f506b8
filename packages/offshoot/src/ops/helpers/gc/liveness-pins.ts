import { LIVENESS_PREFIX } from '../../../core/keys.js';
import { type LivenessPin, livenessExpiry, livenessPins } from '../../../core/liveness.js';
import type { OpsContext } from '../context/context.js';

/**
 * The durable states running daemons' ephemeral forks stand on: the pins of every liveness object still fresh. A
 * daemon writes a new pin before it answers the fork that needs it, and rewrites its object every few seconds while
 * it runs, so GC keeps a held fork's source for as long as its daemon lives and no longer (a stale object pins
 * nothing: its daemon, and so its ephemeral forks, are gone).
 */
export async function readLivenessPins(ctx: OpsContext): Promise<LivenessPin[]> {
  const keys = await ctx.store.backend.listKeys(LIVENESS_PREFIX);
  const now = ctx.now().getTime();
  const out: LivenessPin[] = [];
  for (const got of await ctx.store.backend.getMany(keys)) {
    if (got === undefined) continue;
    const expiry = livenessExpiry(got.body);
    if (expiry !== undefined && expiry > now) out.push(...livenessPins(got.body));
  }
  return out;
}
