import { hostName } from '../../../platform/host-name.js';
import { processAlive } from '../../../platform/process-alive.js';
import { processSpace } from '../../../platform/process-space.js';
import { nodeCrypto } from '../../../platform/node-crypto.js';

/** A lease holder as recorded in a ref: host, pid namespace and pid are for humans, the random id is the identity. */
export interface LeaseHolder {
  host: string;
  /** The pid namespace (Linux inode, `-` elsewhere); absent in the earlier `host/pid` format. */
  pidns: string | undefined;
  pid: number;
  /** 16 hex digits; absent in the earlier `host/pid` format. */
  id: string | undefined;
  /** A role suffix such as `at-rest`, if any. */
  role: string | undefined;
}

/**
 * A fresh holder identity, `host:pidns/pid/id` with 16 random hex digits (and `:role` when given). Two processes
 * never share one, whatever their host names and pids, so a lease never passes to a process that merely looks alike.
 */
export function newLeaseHolder(role?: string): string {
  const base = `${processSpace()}/${process.pid}/${nodeCrypto().randomBytes(8).toString('hex')}`;
  return role === undefined ? base : `${base}:${role}`;
}

/**
 * A holder for a lease meant to outlive the process that takes it (`offshoot lease acquire`): `host/pid/id`, with no
 * pid namespace, so the gone-process shortcut never applies and the lease lasts its whole duration.
 */
export function newDetachedLeaseHolder(): string {
  return `${hostName()}/${process.pid}/${nodeCrypto().randomBytes(8).toString('hex')}`;
}

/** Parses `host:pidns/pid/id[:role]` and the earlier `host/pid[:role]`; undefined for anything else. */
export function parseLeaseHolder(text: string): LeaseHolder | undefined {
  const m = /^([^/\s:]+)(?::([^/\s:]+))?\/([1-9][0-9]{0,9})(?:\/([0-9a-f]{16}))?(?::([a-z-]+))?$/.exec(text);
  if (m === null) return undefined;
  return { host: m[1] ?? '', pidns: m[2], pid: Number(m[3]), id: m[4], role: m[5] };
}

/**
 * True only when the holder is a process of this host and pid namespace that no longer exists: its lease can be
 * treated as expired at once (a killed daemon or command on this machine). Holders elsewhere, of the earlier format,
 * of this process, or alive keep their lease until it expires.
 */
export function leaseHolderDeadHere(text: string | undefined): boolean {
  const h = text === undefined ? undefined : parseLeaseHolder(text);
  if (h?.pidns === undefined || `${h.host}:${h.pidns}` !== processSpace()) return false;
  return h.pid !== process.pid && !processAlive(h.pid);
}
