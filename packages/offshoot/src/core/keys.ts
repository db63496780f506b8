import { fail } from './errors.js';

/** The store manifest key. */
export const MANIFEST_KEY = 'offshoot.json';
/** The store's settings (ours, additive): the history window, store-wide and per database. */
export const CONFIG_KEY = 'config.json';

/** The GC tombstone list key. */
export const TOMBSTONES_KEY = 'gc/tombstones';

/** The store-wide GC lease: at most one GC pass runs at a time, whichever daemon or command runs it. */
export const GC_LEASE_KEY = 'gc/lease';

/** Where daemons say they are alive: one object per running daemon, `liveness/{id}` (ours, additive). */
export const LIVENESS_PREFIX = 'liveness/';

/** The liveness object of the daemon whose holder id is id (16 hex digits). */
export function livenessKey(id: string): string {
  return `${LIVENESS_PREFIX}${id}`;
}

const hex16 = (n: number): string => n.toString(16).padStart(16, '0');

/** refs/{db}/{branch} */
export function refKey(db: string, branch: string): string {
  return `refs/${db}/${branch}`;
}

/** data/{lineage}/ — everything a lineage owns. */
export function lineagePrefix(lineage: string): string {
  return `data/${lineage}/`;
}

/** data/{lineage}/base.json — the create-only copy-on-write pointer. */
export function baseKey(lineage: string): string {
  return `data/${lineage}/base.json`;
}

/** data/{lineage}/{epoch}/snapshot-{txid:016x}.ltx */
export function snapshotKey(lineage: string, epoch: number, txid: number): string {
  return `data/${lineage}/${epoch}/snapshot-${hex16(txid)}.ltx`;
}

/**
 * data/{lineage}/{epoch}/segment-{max:016x}-{min:016x}.ltx — max before min, as the layout has always been. A segment
 * with min < max is a merged segment: the union of the pages of the members covering min..max (later pages win).
 */
export function segmentKey(lineage: string, epoch: number, minTxid: number, maxTxid: number): string {
  return `data/${lineage}/${epoch}/segment-${hex16(maxTxid)}-${hex16(minTxid)}.ltx`;
}

/** One LTX object of a lineage, as named by its key. */
export interface DataObject {
  key: string;
  lineage: string;
  epoch: number;
  kind: 'snapshot' | 'segment';
  minTxid: number;
  maxTxid: number;
  size?: number;
}

const DATA_RE =
  /^data\/([0-9a-z_-]+)\/([0-9]+)\/(?:snapshot-([0-9a-f]{16})|segment-([0-9a-f]{16})-([0-9a-f]{16}))\.ltx$/;

/** Parses a data object key; returns undefined for keys that are not LTX objects (base.json, strays). */
export function parseDataKey(key: string): DataObject | undefined {
  const m = DATA_RE.exec(key);
  if (!m) return undefined;
  const lineage = m[1] as string;
  const epoch = Number(m[2]);
  if (m[3] !== undefined) {
    const txid = parseInt(m[3], 16);
    return { key, lineage, epoch, kind: 'snapshot', minTxid: 1, maxTxid: txid };
  }
  const max = parseInt(m[4] as string, 16);
  const min = parseInt(m[5] as string, 16);
  if (min > max) return undefined;
  return { key, lineage, epoch, kind: 'segment', minTxid: min, maxTxid: max };
}

/** Where branches keep the records their ref's log tail spilled (ours, additive): `log/{db}/{branch}/{log_id}/`. */
export const LOG_PREFIX = 'log/';

/** log/{db}/{branch}/ — every incarnation's log of one branch name. */
export function branchLogPrefix(db: string, branch: string): string {
  return `${LOG_PREFIX}${db}/${branch}/`;
}

/**
 * log/{db}/{branch}/{log_id}/{first:016x}-{last:016x}-{lastAt:012x}.jsonl — the records first..last of one
 * incarnation, the time of the last one (ms since the epoch) in the key so a reader by time, and GC, pick objects
 * without reading them.
 */
export function logObjectKey(
  db: string,
  branch: string,
  logId: string,
  first: number,
  last: number,
  lastAtMs: number,
): string {
  return `${branchLogPrefix(db, branch)}${logId}/${hex16(first)}-${hex16(last)}-${lastAtMs.toString(16).padStart(12, '0')}.jsonl`;
}

/** One log object, as named by its key. */
export interface LogObject {
  key: string;
  db: string;
  branch: string;
  logId: string;
  first: number;
  last: number;
  lastAtMs: number;
}

const LOG_RE = /^log\/([^/]+)\/([^/]+)\/([0-9a-f]{1,64})\/([0-9a-f]{16})-([0-9a-f]{16})-([0-9a-f]{12})\.jsonl$/;

/** Parses a log object key; undefined for anything else. */
export function parseLogKey(key: string): LogObject | undefined {
  const m = LOG_RE.exec(key);
  if (!m) return undefined;
  const first = parseInt(m[4] as string, 16);
  const last = parseInt(m[5] as string, 16);
  if (first < 1 || last < first) return undefined;
  return {
    key,
    db: m[1] as string,
    branch: m[2] as string,
    logId: m[3] as string,
    first,
    last,
    lastAtMs: parseInt(m[6] as string, 16),
  };
}

/** Parses refs/{db}/{branch}; undefined for anything else. */
export function parseRefKey(key: string): { db: string; branch: string } | undefined {
  const parts = key.split('/');
  if (parts.length !== 3 || parts[0] !== 'refs' || !parts[1] || !parts[2]) return undefined;
  return { db: parts[1], branch: parts[2] };
}

/** Throws CORRUPT for a lineage id that could escape its prefix. */
export function checkLineageId(id: string): string {
  if (!/^[0-9a-z_-]{1,64}$/.test(id)) throw fail('CORRUPT', `invalid lineage id ${JSON.stringify(id)}`);
  return id;
}
