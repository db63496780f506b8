import { fail } from './errors.js';
import { type LogRecord, parseLogTail } from './history.js';
import type { Meta } from './meta.js';
import { nameMap } from './name-map.js';

/** The ref schema this build writes; schema 1 refs are upgraded in memory on read. */
export const REF_SCHEMA = 2;

/** A named point in a branch's history. */
export interface Checkpoint {
  txid: number;
  epoch: number;
  created_at?: string;
  meta?: Meta;
}

/** A copy-on-write base pointer: the lineage and txid a branch reads through below its own objects. */
export interface BasePointer {
  lineage: string;
  txid: number;
}

/** A branch ref, exactly the JSON stored at refs/{db}/{branch}; every change is a compare-and-swap. */
export interface Ref {
  schema: number;
  lineage: string;
  epoch: number;
  head_txid: number;
  head_epoch: number;
  checkpoints: Record<string, Checkpoint>;
  parent?: string;
  protected?: boolean;
  lease_holder?: string;
  lease_expiry?: string;
  /**
   * Ours, additive: where a daemon session's holder pid means something (`host:pidns`), so a holder that is provably
   * gone (this host, this pid namespace, no such process) can be told from a live one. Kept only with a holder.
   */
  lease_space?: string;
  /**
   * Ours, additive: the id of the daemon liveness object (`liveness/{id}`) a daemon session's long lease stands on.
   * The lease is live only while that object is fresh too (see leaseLive); kept only with a holder.
   */
  lease_liveness?: string;
  ttl?: string;
  touched_at?: string;
  reaping?: boolean;
  deleting?: boolean;
  deleting_at?: string;
  meta?: Meta;
  base?: BasePointer;
  /** Monotonic per write, so two writes of otherwise identical bytes never share an S3 ETag. */
  generation?: number;
  /**
   * Ours, additive: the id of this incarnation of the branch's log (random, so a name destroyed and made again starts
   * a new log), and the records written since its last spill into `log/{db}/{branch}/{log_id}/`. Each record is
   * appended in the same compare-and-swap as the change it records. An earlier implementation ignores both; a write
   * of the ref by it drops them (the records not yet spilled).
   */
  log_id?: string;
  log?: LogRecord[];
}

function corrupt(what: string): Error {
  return fail('CORRUPT', `ref is malformed: ${what}`, {
    hint: 'restore the ref object from a backup or destroy the branch',
  });
}

// What a failing check names: a top-level field, or a field of checkpoint `of` (`what` then starts with its `.`). Built
// only for the message: status and GC check every field of every ref, and most refs are well formed.
function fieldName(what: string, of: string | undefined): string {
  return of === undefined ? what : `checkpoint ${of}${what}`;
}

function num(v: unknown, what: string, of?: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw corrupt(`${fieldName(what, of)} is not a non-negative integer`);
  return v;
}

function optStr(v: unknown, what: string, of?: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw corrupt(`${fieldName(what, of)} is not a string`);
  return v;
}

function optMeta(v: unknown, what: string, of?: string): Meta | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw corrupt(`${fieldName(what, of)} is not an object`);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 0) return undefined;
  const out: Meta = nameMap();
  for (const k of keys) {
    const val = o[k];
    if (typeof val !== 'string') throw corrupt(`${fieldName(what, of)}.${k} is not a string`);
    out[k] = val;
  }
  return out;
}

function parseCheckpoint(v: unknown, name: string, schema: number, fallbackEpoch: number): Checkpoint {
  // Schema 1 stored checkpoints as bare txids.
  if (schema === 1 && typeof v === 'number') return { txid: num(v, '', name), epoch: fallbackEpoch };
  if (typeof v !== 'object' || v === null) throw corrupt(`checkpoint ${name} is not an object`);
  const o = v as Record<string, unknown>;
  const cp: Checkpoint = {
    txid: num(o.txid, '.txid', name),
    epoch: o.epoch === undefined ? fallbackEpoch : num(o.epoch, '.epoch', name),
  };
  const created = optStr(o.created_at, '.created_at', name);
  if (created !== undefined) cp.created_at = created;
  const meta = optMeta(o.meta, '.meta', name);
  if (meta !== undefined) cp.meta = meta;
  return cp;
}

// The optional string fields of a ref, in the order they are checked and set.
const STRING_FIELDS = [
  'parent',
  'lease_holder',
  'lease_expiry',
  'lease_space',
  'lease_liveness',
  'ttl',
  'touched_at',
  'deleting_at',
] as const;

// Ref JSON as text: a string as it is, a Buffer decoded, any other array through a view of its bytes, not a copy
// (status and GC parse every ref of the store, and a copy costs more than the decoding of a ref).
function refText(bytes: Uint8Array | string): string {
  if (typeof bytes === 'string') return bytes;
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buf.toString('utf8');
}

/** Parses ref JSON (its bytes, or its text as read), upgrading schema 1 and refusing a schema newer than this build understands. */
export function parseRef(bytes: Uint8Array | string): Ref {
  let raw: unknown;
  try {
    raw = JSON.parse(refText(bytes));
  } catch {
    throw corrupt('not JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw corrupt('not an object');
  const o = raw as Record<string, unknown>;
  const schema = o.schema === undefined ? 1 : num(o.schema, 'schema');
  if (schema > REF_SCHEMA) {
    throw fail('SCHEMA_TOO_NEW', `ref schema ${schema} is newer than this binary supports (${REF_SCHEMA})`, {
      hint: 'upgrade offshoot',
    });
  }
  if (typeof o.lineage !== 'string' || o.lineage === '') throw corrupt('lineage is missing');
  const epoch = num(o.epoch ?? 1, 'epoch');
  const ref: Ref = {
    schema: REF_SCHEMA,
    lineage: o.lineage,
    epoch,
    head_txid: num(o.head_txid ?? 0, 'head_txid'),
    head_epoch: num(o.head_epoch ?? epoch, 'head_epoch'),
    checkpoints: nameMap(),
  };
  const cps = o.checkpoints;
  if (cps !== undefined && cps !== null) {
    if (typeof cps !== 'object' || Array.isArray(cps)) throw corrupt('checkpoints is not an object');
    const all = cps as Record<string, unknown>;
    for (const name of Object.keys(all))
      ref.checkpoints[name] = parseCheckpoint(all[name], name, schema, ref.head_epoch);
  }
  for (const f of STRING_FIELDS) {
    const v = optStr(o[f], f);
    if (v !== undefined) ref[f] = v;
  }
  if (o.protected === true) ref.protected = true;
  if (o.reaping === true) ref.reaping = true;
  if (o.deleting === true) ref.deleting = true;
  const meta = optMeta(o.meta, 'meta');
  if (meta !== undefined) ref.meta = meta;
  if (o.base !== undefined && o.base !== null) {
    const b = o.base as Record<string, unknown>;
    if (typeof b !== 'object' || typeof b.lineage !== 'string' || b.lineage === '') throw corrupt('base is malformed');
    ref.base = { lineage: b.lineage, txid: num(b.txid, 'base.txid') };
  }
  if (o.generation !== undefined) ref.generation = num(o.generation, 'generation');
  // A damaged log is dropped with its id, so the next record starts a fresh log rather than reusing its numbers.
  if (typeof o.log_id === 'string' && /^[0-9a-f]{1,64}$/.test(o.log_id)) {
    const tail = o.log === undefined ? [] : parseLogTail(o.log);
    if (tail !== undefined) {
      ref.log_id = o.log_id;
      if (tail.length > 0) ref.log = tail;
    }
  }
  return ref;
}

/** A copy of r with no lease on it: no holder, expiry, pid space or liveness object. */
export function withoutLease(r: Ref): Ref {
  const next = { ...r };
  delete next.lease_holder;
  delete next.lease_expiry;
  delete next.lease_space;
  delete next.lease_liveness;
  return next;
}

/** Serializes a ref with a bumped generation; field order is stable so output is deterministic. */
export function serializeRef(ref: Ref): Buffer {
  const out: Ref = {
    schema: REF_SCHEMA,
    lineage: ref.lineage,
    epoch: ref.epoch,
    head_txid: ref.head_txid,
    head_epoch: ref.head_epoch,
    checkpoints: ref.checkpoints,
  };
  if (ref.parent) out.parent = ref.parent;
  if (ref.protected) out.protected = true;
  if (ref.lease_holder) out.lease_holder = ref.lease_holder;
  if (ref.lease_expiry) out.lease_expiry = ref.lease_expiry;
  if (ref.lease_holder && ref.lease_space) out.lease_space = ref.lease_space;
  if (ref.lease_holder && ref.lease_liveness) out.lease_liveness = ref.lease_liveness;
  if (ref.ttl) out.ttl = ref.ttl;
  if (ref.touched_at) out.touched_at = ref.touched_at;
  if (ref.reaping) out.reaping = true;
  if (ref.deleting) out.deleting = true;
  if (ref.deleting_at) out.deleting_at = ref.deleting_at;
  if (ref.meta && Object.keys(ref.meta).length > 0) out.meta = ref.meta;
  if (ref.base) out.base = ref.base;
  out.generation = (ref.generation ?? 0) + 1;
  if (ref.log_id) {
    out.log_id = ref.log_id;
    if (ref.log && ref.log.length > 0) out.log = ref.log;
  }
  return Buffer.from(JSON.stringify(out));
}

/** A deep copy of a ref, so callers can mutate a candidate without touching the one they read. */
export function cloneRef(ref: Ref): Ref {
  const copy = JSON.parse(JSON.stringify(ref)) as Ref;
  copy.checkpoints = nameMap(copy.checkpoints);
  for (const cp of Object.values(copy.checkpoints)) if (cp.meta) cp.meta = nameMap(cp.meta);
  if (copy.meta) copy.meta = nameMap(copy.meta);
  return copy;
}
