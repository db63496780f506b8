/**
 * A daemon's liveness object, `liveness/{id}`: rewritten every few seconds while the daemon runs, removed when it
 * stops cleanly. The long leases of its sessions stand on it, so one write a period keeps them all live.
 */
export interface LivenessRecord {
  /** The daemon's lease holder, for humans. */
  holder: string;
  /** RFC 3339: the daemon counts as gone after this unless it writes again. */
  expiry: string;
}

/** A liveness id as a ref names it: the 16 hex digits of the daemon's holder id. */
export const LIVENESS_ID = /^[0-9a-f]{16}$/;

/** The object's bytes. */
export function serializeLiveness(r: LivenessRecord): Buffer {
  return Buffer.from(JSON.stringify({ holder: r.holder, expiry: r.expiry }));
}

/** The expiry a liveness object records, in ms; undefined when the bytes are not one (it then proves nothing). */
export function livenessExpiry(bytes: Uint8Array): number | undefined {
  try {
    const o = JSON.parse(Buffer.from(bytes).toString('utf8')) as { expiry?: unknown };
    const t = typeof o.expiry === 'string' ? Date.parse(o.expiry) : Number.NaN;
    return Number.isFinite(t) ? t : undefined;
  } catch {
    return undefined;
  }
}
