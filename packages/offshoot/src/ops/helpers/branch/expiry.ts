import { durationMs, formatDuration, msDuration, parseDuration } from '../../../core/duration.js';
import type { Ref } from '../../../core/ref.js';
import { leaseEnd, type Liveness } from './lease-liveness.js';

/**
 * The reap deadline of a ref: max(touched_at, the lease's end) + ttl, in ms; undefined without a TTL. The lease's
 * end is leaseEnd's (its expiry, cut short by a stale or missing liveness object).
 */
export function reapDeadline(
  ttl: string | undefined,
  touchedAt: string | undefined,
  leaseEndMs: number | undefined,
): number | undefined {
  if (!ttl) return undefined;
  const from = Math.max(Date.parse(touchedAt ?? '') || 0, leaseEndMs ?? 0);
  return from + ttlMs(ttl);
}

// A store's TTLs are a handful of strings (`720h0m0s`) on every listed ref: each is parsed once, up to a bound.
const TTL_MS = new Map<string, number>();
const TTL_MS_MAX = 256;

function ttlMs(ttl: string): number {
  let ms = TTL_MS.get(ttl);
  if (ms === undefined) {
    ms = durationMs(parseDuration(ttl));
    if (TTL_MS.size < TTL_MS_MAX) TTL_MS.set(ttl, ms);
  }
  return ms;
}

/**
 * The one expiry rule, the reaper's: a branch with a TTL may be reaped once it has gone that long without activity,
 * counted from the later of its last activity and its lease's end (leaseEnd); a protected branch never expires. Every
 * surface that shows an expiry (status, the wire, MCP, the UI, touch, unprotect) computes it here. A lease the
 * caller itself holds (`ownLease`, about to be given back) does not count.
 */
export function expiryOf(
  ref: Pick<Ref, 'protected' | 'ttl' | 'touched_at' | 'lease_expiry' | 'lease_holder' | 'lease_liveness'>,
  liveness: Liveness,
  ownLease?: string,
): number | undefined {
  if (ref.protected) return undefined;
  const lease = ownLease !== undefined && ref.lease_holder === ownLease ? undefined : leaseEnd(ref, liveness);
  return reapDeadline(ref.ttl, ref.touched_at, lease);
}

/** Time left before an expiry as status shows it: a duration rounded up to the second, or `expired`. */
export function remainingUntil(expiry: number, now: Date): string {
  if (expiry <= now.getTime()) return 'expired';
  return formatDuration(msDuration(Math.ceil((expiry - now.getTime()) / 1000) * 1000));
}

/** An expiry as RFC 3339, for results and JSON. */
export function expiryText(expiry: number | undefined): string | undefined {
  return expiry === undefined ? undefined : new Date(expiry).toISOString();
}
