import { type LogRecord, mergeBySeq } from '../../../core/history.js';
import type { LogObject } from '../../../core/keys.js';
import type { Ref } from '../../../core/ref.js';
import type { OpsContext } from '../context/context.js';

/** One incarnation of a branch name as its log objects' keys show it, without reading them. */
export interface Incarnation {
  logId: string;
  /** The highest sequence number its objects hold (the tail of a live one may hold more). */
  last: number;
  /** When its newest spilled record was written. */
  lastAt: Date;
  /** True when no ref of this incarnation exists: it was destroyed, reaped, or removed by another implementation. */
  gone: boolean;
}

/**
 * The log of one incarnation of a branch, ready to be read newest first: the live ref's tail, if the branch exists,
 * and its objects in sequence order. Reading the ref before listing the objects is what makes the pair whole: a spill
 * is written before the compare-and-swap that trims the tail, so a trimmed tail's records are already listed.
 */
export interface BranchLog {
  db: string;
  branch: string;
  /** Undefined for a branch whose ref has no log (it predates the log, or an earlier implementation rewrote it). */
  logId: string | undefined;
  /** The branch exists and this is its log; false: the last incarnation of a name with no ref now. */
  live: boolean;
  tail: readonly LogRecord[];
  objects: readonly LogObject[];
  /** Every other incarnation of the name (destroyed ones), newest first. */
  others: Incarnation[];
}

/**
 * Opens the log of db@branch: of its ref when it exists (`ref`: the caller's read of it, else read here; null: it
 * does not exist), else of its newest destroyed incarnation, whose final object ends with who destroyed it.
 */
export async function openBranchLog(ctx: OpsContext, db: string, branch: string, ref?: Ref | null): Promise<BranchLog> {
  const current = ref === undefined ? (await ctx.store.tryGetRef(db, branch))?.ref : (ref ?? undefined);
  const all = await ctx.store.listLogObjects(db, branch);
  const byId = new Map<string, LogObject[]>();
  for (const o of all) {
    let list = byId.get(o.logId);
    if (list === undefined) byId.set(o.logId, (list = []));
    list.push(o);
  }
  for (const list of byId.values()) list.sort((a, b) => a.first - b.first || a.last - b.last);
  const incarnations = [...byId.entries()].map(([logId, list]) => summarize(logId, list, current?.log_id));
  incarnations.sort((a, b) => b.lastAt.getTime() - a.lastAt.getTime());
  const logId = current !== undefined ? current.log_id : incarnations.find((i) => i.gone)?.logId;
  return {
    db,
    branch,
    logId,
    live: current !== undefined,
    tail: current?.log ?? [],
    objects: logId === undefined ? [] : (byId.get(logId) ?? []),
    others: incarnations.filter((i) => i.logId !== logId),
  };
}

function summarize(logId: string, list: readonly LogObject[], live: string | undefined): Incarnation {
  let last = 0;
  let lastAt = 0;
  for (const o of list) {
    last = Math.max(last, o.last);
    lastAt = Math.max(lastAt, o.lastAtMs);
  }
  return { logId, last, lastAt: new Date(lastAt), gone: logId !== live };
}

/** How many objects a newest-first read fetches at once. */
const READ_BATCH = 16;

/**
 * Walks a log's records newest first, reading objects only as far as the walk goes (in batches), and stops when
 * `visit` returns false. `skip(o, older)` may pass over an object unread: given it and the object just older, it
 * says no record in it can matter (a reader by time knows from their keys). Each record is visited once, however
 * many objects repeat it.
 */
export async function walkNewestFirst(
  ctx: OpsContext,
  log: BranchLog,
  visit: (r: LogRecord) => boolean,
  skip: (o: LogObject, older: LogObject | undefined) => boolean = () => false,
): Promise<void> {
  const seen = new Set<number>();
  const step = (records: readonly LogRecord[]): boolean => {
    for (let i = records.length - 1; i >= 0; i--) {
      const r = records[i] as LogRecord;
      if (seen.has(r.seq)) continue;
      seen.add(r.seq);
      if (!visit(r)) return false;
    }
    return true;
  };
  if (!step(mergeBySeq([log.tail]))) return;
  const objects = log.objects;
  let i = objects.length - 1;
  while (i >= 0) {
    const batch: LogObject[] = [];
    for (; i >= 0 && batch.length < READ_BATCH; i--) {
      const o = objects[i] as LogObject;
      if (!skip(o, objects[i - 1])) batch.push(o);
    }
    if (batch.length === 0) continue;
    const read = await ctx.store.readLogObjects(batch);
    // The batch is newest first; within it, and against the tail, records are merged by sequence number.
    const records = mergeBySeq(read);
    if (!step(records)) return;
  }
}
