import { durationMs, parseDuration } from '../../../core/duration.js';

/** The reap deadline of a ref: max(touched_at, lease_expiry) + ttl, in ms; undefined without a TTL. */
export function reapDeadline(
  ttl: string | undefined,
  touchedAt: string | undefined,
  leaseExpiry: string | undefined,
): number | undefined {
  if (!ttl) return undefined;
  const from = Math.max(Date.parse(touchedAt ?? '') || 0, Date.parse(leaseExpiry ?? '') || 0);
  return from + durationMs(parseDuration(ttl));
}
