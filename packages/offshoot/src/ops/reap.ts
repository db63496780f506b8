import type { OpsContext } from './helpers/context/context.js';
import { reapExpired, type ReapReport } from './helpers/gc/reap-expired.js';

// What a host that reaps on a cadence (the janitor, the MCP reaper) reports once per postponed reap.
export { newlyPostponed, type PostponedReap, type ReapReport } from './helpers/gc/reap-expired.js';

/** `offshoot reap` (and the first step of gc): destroys the unprotected, unleased branches whose TTL has run out. */
export function reap(ctx: OpsContext): Promise<ReapReport> {
  return reapExpired(ctx);
}
