import { inBatches } from '../../../core/in-batches.js';
import { changesState, type LogRecord, mergeBySeq } from '../../../core/history.js';
import { type LogObject, parseLogKey } from '../../../core/keys.js';
import type { Ref } from '../../../core/ref.js';
import type { ChainResolver } from '../../../store/chain-resolver.js';
import { historyWindowMs, readStoreConfig, type StoreConfig } from '../../../store/store-config.js';
import type { OpsContext } from '../context/context.js';
import { GC_CONCURRENCY } from './ref-snapshot.js';

/** What the history adds to a GC mark: the data objects the window keeps, and the log objects kept. */
export interface HistoryMark {
  /** Members and base pointers of the chain of every durable state inside a branch's history window. */
  windowKeys: Set<string>;
  /** Log objects kept: a live incarnation's, a destroyed one's while its data or its window lasts. */
  logKeys: Set<string>;
}

/** A readable ref of the pass, and the names of the refs it could not read (whose logs are kept whole). */
export interface HistoryRefs {
  readable: ReadonlyArray<{ db: string; branch: string; ref: Ref }>;
  unreadable: ReadonlyArray<{ db: string; branch: string }>;
}

/**
 * The history rules of the mark. For every live branch, the chain of each durable state its log shows inside the
 * history window of its database (the state at the window's start, and every one since) is kept: a moment inside
 * the window stays addressable whatever merges, compactions, rollbacks and promotes have done since. Only the
 * window's records are read: a log object's key says when its last record was written. Log objects: a live
 * incarnation's are kept (and any of a branch whose ref could not be read); a destroyed one's while its last
 * lineage still has data objects or its end is inside the window, whichever is longer. `logKeys` are the log/ keys
 * listed with data/ (before the refs were read), `present` that listing's data/ keys.
 */
export async function markHistory(
  ctx: OpsContext,
  refs: HistoryRefs,
  logKeys: readonly string[],
  present: ReadonlySet<string>,
  resolver: ChainResolver,
): Promise<HistoryMark> {
  const lineages = new Set<string>();
  for (const k of present) {
    const lineage = /^data\/([^/]+)\//.exec(k)?.[1];
    if (lineage !== undefined) lineages.add(lineage);
  }
  const { config } = await readStoreConfig(ctx.store.backend);
  const now = ctx.now().getTime();
  const byIncarnation = groupLogObjects(logKeys);
  const mark: HistoryMark = { windowKeys: new Set(), logKeys: new Set() };
  const live = new Set<string>();
  for (const { db, branch, ref } of refs.readable)
    if (ref.log_id !== undefined) live.add(`${db}/${branch}/${ref.log_id}`);
  const blind = new Set(refs.unreadable.map(({ db, branch }) => `${db}/${branch}/`));
  const dead: LogObject[][] = [];
  for (const [id, objects] of byIncarnation) {
    if (live.has(id) || blind.has(id.slice(0, id.lastIndexOf('/') + 1)))
      for (const o of objects) mark.logKeys.add(o.key);
    else dead.push(objects);
  }
  const resolved = new Set<string>();
  await inBatches(refs.readable, GC_CONCURRENCY, async ({ db, branch, ref }) => {
    const start = now - historyWindowMs(config, db);
    const objects = ref.log_id === undefined ? [] : (byIncarnation.get(`${db}/${branch}/${ref.log_id}`) ?? []);
    for (const r of await windowStates(ctx, ref, objects, start)) {
      const at = `${r.lineage}@${r.txid_after}`;
      if (resolved.has(at)) continue;
      resolved.add(at);
      try {
        const chain = await resolver.resolve(r.lineage, r.txid_after);
        for (const m of chain.members) mark.windowKeys.add(m.key);
        for (const k of chain.baseKeys) mark.windowKeys.add(k);
      } catch {
        // A state whose objects are already gone (collected before the window reached it) keeps nothing.
      }
    }
  });
  await inBatches(dead, GC_CONCURRENCY, async (objects) => {
    if (await keepDead(ctx, config, objects, lineages, now)) for (const o of objects) mark.logKeys.add(o.key);
  });
  return mark;
}

/** The log objects of each incarnation (`db/branch/log_id`), in sequence order. */
function groupLogObjects(keys: readonly string[]): Map<string, LogObject[]> {
  const out = new Map<string, LogObject[]>();
  for (const key of keys) {
    const o = parseLogKey(key);
    if (o === undefined) continue;
    const id = `${o.db}/${o.branch}/${o.logId}`;
    let list = out.get(id);
    if (list === undefined) out.set(id, (list = []));
    list.push(o);
  }
  for (const list of out.values()) list.sort((a, b) => a.first - b.first || a.last - b.last);
  return out;
}

/**
 * The records of a branch's states inside its window: every one written since `start`, and the one in force at
 * `start`. Objects are read only from the newest one ending before `start` on, and not at all when the ref's own
 * tail already reaches back past it.
 */
async function windowStates(
  ctx: OpsContext,
  ref: Ref,
  objects: readonly LogObject[],
  start: number,
): Promise<LogRecord[]> {
  const tail = ref.log ?? [];
  let parts: LogRecord[][] = [tail];
  const first = tail[0];
  if (objects.length > 0 && (first === undefined || Date.parse(first.at) >= start)) {
    let from = objects.findIndex((o) => o.lastAtMs >= start);
    if (from < 0) from = objects.length;
    parts = [...(await ctx.store.readLogObjects(objects.slice(Math.max(0, from - 1)))), tail];
  }
  const states = mergeBySeq(parts).filter(changesState);
  let i = states.length - 1;
  while (i > 0 && Date.parse((states[i] as LogRecord).at) >= start) i--;
  return states.slice(i);
}

/**
 * Whether a destroyed incarnation's log is still kept: while its end is inside the window of its database, or its
 * last lineage still has data objects (what GC has not yet collected of the branch). Its newest object is read
 * for that lineage; one that cannot be read keeps the log.
 */
async function keepDead(
  ctx: OpsContext,
  config: StoreConfig,
  objects: readonly LogObject[],
  lineages: ReadonlySet<string>,
  now: number,
): Promise<boolean> {
  const newest = objects.reduce((a, b) => (b.last > a.last ? b : a));
  if (newest.lastAtMs >= now - historyWindowMs(config, newest.db)) return true;
  let last: LogRecord | undefined;
  try {
    last = (await ctx.store.readLogObjects([newest]))[0]?.at(-1);
  } catch {
    return true;
  }
  return last === undefined || lineages.has(last.lineage);
}
