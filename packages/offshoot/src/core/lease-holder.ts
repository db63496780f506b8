import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** A lease holder as recorded in a ref: the host and pid are for humans, the random id is the identity. */
export interface LeaseHolder {
  host: string;
  pid: number;
  /** 16 hex digits; absent in the earlier `host/pid` format. */
  id: string | undefined;
  /** A role suffix such as `at-rest`, if any. */
  role: string | undefined;
}

/**
 * A fresh holder identity, `host/pid/id` with 16 random hex digits (and `:role` when given). Two processes never
 * share one, whatever their host names and pids, so a lease never passes to a process that merely looks alike.
 */
export function newLeaseHolder(role?: string): string {
  const base = `${hostname()}/${process.pid}/${randomBytes(8).toString('hex')}`;
  return role === undefined ? base : `${base}:${role}`;
}

/** Parses `host/pid/id[:role]` and the earlier `host/pid[:role]`; undefined for anything else. */
export function parseLeaseHolder(text: string): LeaseHolder | undefined {
  const m = /^([^/\s]+)\/([1-9][0-9]{0,9})(?:\/([0-9a-f]{16}))?(?::([a-z-]+))?$/.exec(text);
  if (m === null) return undefined;
  return { host: m[1] ?? '', pid: Number(m[2]), id: m[3], role: m[4] };
}
