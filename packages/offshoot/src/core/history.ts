import { fail } from './errors.js';
import type { LogActor, LogRecord } from './log-record.js';
import type { Meta } from './meta.js';

export type { LogActor, LogOp, LogRecord } from './log-record.js';

/**
 * Who asked for a change and through what: the actor, the surface (`cli`, `daemon`, `mcp:<tool>`,
 * `sdk:<adapter>/<framework>`, `library`, `janitor`) and the actor's own tags (run id, agent name).
 */
export interface Origin {
  actor: LogActor;
  surface: string;
  meta?: Meta;
}

/** A record before the log numbers it. */
export type NewLogRecord = Omit<LogRecord, 'seq'>;

/** The most records a ref's tail holds before they are spilled into a log object. */
export const LOG_TAIL_RECORDS = 8;

/** The most bytes a ref's tail holds (as JSON) before it is spilled; a single record larger than this still fits. */
export const LOG_TAIL_BYTES = 2048;

/** The most keys and bytes the actor's meta may carry: each record repeats it, and a ref's tail is small. */
export const ORIGIN_META_LIMITS = { maxKeys: 8, maxValueBytes: 128 } as const;

/** The surface a record names when nothing said which: the engine called as a library. */
export const LIBRARY_SURFACE = 'library';

const SURFACE_RE = /^[a-z][a-z0-9_.-]*(?::[A-Za-z0-9_.@/-]{1,96})?$/;

/** Throws INVALID_ARGUMENT unless surface reads as `kind` or `kind:detail` (`mcp:offshoot_fork`, `sdk:ai-sdk/ai`). */
export function validateSurface(surface: string): string {
  if (surface.length > 128 || !SURFACE_RE.test(surface))
    throw fail('INVALID_ARGUMENT', `invalid origin surface ${JSON.stringify(surface.slice(0, 40))}`, {
      hint: 'name the surface as kind or kind:detail, e.g. "sdk:langgraph/langgraph-js" or "mcp:offshoot_fork"',
    });
  return surface;
}

/** Throws INVALID_ARGUMENT when the actor's meta is larger than a record may carry (ORIGIN_META_LIMITS). */
export function validateOriginMeta(meta: Meta | undefined): Meta | undefined {
  if (meta === undefined) return undefined;
  const keys = Object.keys(meta);
  if (keys.length > ORIGIN_META_LIMITS.maxKeys)
    throw fail('INVALID_ARGUMENT', `origin meta has ${keys.length} keys; at most ${ORIGIN_META_LIMITS.maxKeys}`, {
      hint: 'keep the actor tags to a few, such as run and agent',
    });
  for (const k of keys) {
    const v = meta[k];
    if (typeof v !== 'string' || k.length === 0 || Buffer.byteLength(k) > 64)
      throw fail(
        'INVALID_ARGUMENT',
        `origin meta ${JSON.stringify(k.slice(0, 20))} is not a short key with a text value`,
        {
          hint: 'give every actor tag a key of up to 64 bytes and a string value',
        },
      );
    if (Buffer.byteLength(v) > ORIGIN_META_LIMITS.maxValueBytes)
      throw fail(
        'INVALID_ARGUMENT',
        `origin meta value for ${JSON.stringify(k)} is longer than ${ORIGIN_META_LIMITS.maxValueBytes} bytes`,
        {
          hint: 'shorten the actor tag',
        },
      );
  }
  return keys.length === 0 ? undefined : meta;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

// True when v has the fields every record carries, well typed (anything else it carries is kept as it is).
function isLogRecord(v: unknown): v is LogRecord {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  return (
    isCount(r.seq) &&
    r.seq > 0 &&
    typeof r.op === 'string' &&
    typeof r.at === 'string' &&
    (r.actor === 'human' || r.actor === 'agent') &&
    typeof r.surface === 'string' &&
    typeof r.lineage === 'string' &&
    isCount(r.txid_before) &&
    isCount(r.txid_after)
  );
}

/**
 * A stored tail as records, or undefined when it is not one (not an array, a malformed record, sequence numbers not
 * strictly rising): a ref's log is never a reason to refuse the ref, so a damaged tail reads as none.
 */
export function parseLogTail(v: unknown): LogRecord[] | undefined {
  if (!Array.isArray(v)) return undefined;
  let last = 0;
  for (const r of v) {
    if (!isLogRecord(r) || r.seq <= last) return undefined;
    last = r.seq;
  }
  return v as LogRecord[];
}

/** The text of a log object: one record per line (JSON Lines), in sequence order. */
export function encodeLogRecords(records: readonly LogRecord[]): Buffer {
  return Buffer.from(`${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
}

/** Parses a log object's text; a line that is not a record is CORRUPT naming the key. */
export function decodeLogRecords(key: string, text: string): LogRecord[] {
  const out: LogRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch {
      r = undefined;
    }
    if (!isLogRecord(r))
      throw fail('CORRUPT', `log object ${key} holds a line that is not a log record`, {
        hint: `restore ${key} from a backup, or remove it (the records it held are lost)`,
      });
    out.push(r);
  }
  return out;
}

// The JSON size of a tail, as a ref stores it.
function tailBytes(records: readonly LogRecord[]): number {
  return Buffer.byteLength(JSON.stringify(records));
}

/**
 * Where `record` goes: after the tail when both fit the bounds, else the tail is spilled (every record it holds is
 * committed, so its object's bytes are always the same) and the new tail is the record alone.
 */
export function planAppend(
  tail: readonly LogRecord[],
  record: NewLogRecord,
): { tail: LogRecord[]; spill: LogRecord[] | undefined } {
  const seq = (tail.at(-1)?.seq ?? 0) + 1;
  const next = { seq, ...record } as LogRecord;
  const joined = [...tail, next];
  if (tail.length === 0 || (joined.length <= LOG_TAIL_RECORDS && tailBytes(joined) <= LOG_TAIL_BYTES))
    return { tail: joined, spill: undefined };
  return { tail: [next], spill: [...tail] };
}

/** Merges records from objects and a tail by sequence number, each once (an orphaned spill repeats committed ones). */
export function mergeBySeq(parts: ReadonlyArray<readonly LogRecord[]>): LogRecord[] {
  const bySeq = new Map<number, LogRecord>();
  for (const part of parts) for (const r of part) if (!bySeq.has(r.seq)) bySeq.set(r.seq, r);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** True for the records that move a branch's head to another state (what a moment may resolve to). */
export function changesState(r: LogRecord): boolean {
  return r.op !== 'destroy' && r.op !== 'reap';
}

/** The record that ends an incarnation: a destroy or a reap. */
export function endsIncarnation(r: LogRecord): boolean {
  return r.op === 'destroy' || r.op === 'reap';
}
