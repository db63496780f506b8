/**
 * A daemon's liveness object, `liveness/{id}`: rewritten every few seconds while the daemon runs, removed when it
 * stops cleanly. The long leases of its sessions stand on it, so one write a period keeps them all live.
 */
export interface LivenessRecord {
  /** The daemon's lease holder, for humans. */
  holder: string;
  /** RFC 3339: the daemon counts as gone after this unless it writes again. */
  expiry: string;
  /**
   * Additive: the durable states the daemon's ephemeral forks stand on (lineage and txid of each), which GC keeps
   * while the object is fresh. Absent when it holds none; the earlier implementation never reads the object.
   */
  pins?: LivenessPin[];
}

/** A durable state a daemon's ephemeral forks stand on: the chain of `lineage` at `txid`. */
export interface LivenessPin {
  lineage: string;
  txid: number;
}

/** A liveness id as a ref names it: the 16 hex digits of the daemon's holder id. */
export const LIVENESS_ID = /^[0-9a-f]{16}$/;

/** The object's bytes. */
export function serializeLiveness(r: LivenessRecord): Buffer {
  const pins = r.pins !== undefined && r.pins.length > 0 ? { pins: r.pins.map((p) => [p.lineage, p.txid]) } : {};
  return Buffer.from(JSON.stringify({ holder: r.holder, expiry: r.expiry, ...pins }));
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

const PIN_LINEAGE = /^[0-9a-f]{32}$/;

/** The pins a liveness object records ([] for none, or bytes that are not one). */
export function livenessPins(bytes: Uint8Array): LivenessPin[] {
  try {
    const o = JSON.parse(Buffer.from(bytes).toString('utf8')) as { pins?: unknown };
    if (!Array.isArray(o.pins)) return [];
    const out: LivenessPin[] = [];
    for (const p of o.pins as unknown[]) {
      if (Array.isArray(p) && typeof p[0] === 'string' && PIN_LINEAGE.test(p[0]) && Number.isSafeInteger(p[1]))
        out.push({ lineage: p[0], txid: p[1] as number });
    }
    return out;
  } catch {
    return [];
  }
}
