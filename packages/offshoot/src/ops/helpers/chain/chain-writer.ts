import { join } from 'node:path';
import { hasCode } from '../../../core/errors.js';
import { parseDataKey, segmentKey, snapshotKey, type DataObject } from '../../../core/keys.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import { MERGED_LAYOUT_VERSION } from '../../../store/manifest.js';
import type { VersionedRef } from '../../../store/store.js';
import { leaseLiveNow } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { encodeMerged } from './merge-segments.js';
import { snapshotAtHead } from './snapshot-at-head.js';
import { withTempDir } from '../context/temp-dir.js';
import { type EpochBumpHooks, uploadAtHead } from './upload-at-head.js';

/** The most members a chain written by this build resolves through in a store at the merged layout (3). */
export const MAX_CHAIN_MEMBERS = 8;

/** A snapshot replaces a segment when this share of the pages changed (on databases of at least 64 pages). */
const SNAPSHOT_SHARE = 0.5;

/**
 * What the next head object is: a segment of the changed pages, or a snapshot when most pages changed (it then costs
 * no more than the segment would) or the caller has no base to diff against. Chain depth never forces a snapshot:
 * compaction bounds it (see compactChain).
 */
export function headKind(changed: number, commit: number, force: boolean): 'segment' | 'snapshot' {
  if (force) return 'snapshot';
  return commit >= 64 && changed / commit >= SNAPSHOT_SHARE ? 'snapshot' : 'segment';
}

/** True when a store at `layout` allows merged segments. */
function mergesAllowed(layout: number): boolean {
  return layout >= MERGED_LAYOUT_VERSION;
}

/**
 * The hard bound at the merged layout: 8, or fewer under a low snapshot cadence (kept below it, as the daemon's fork
 * floor is the cadence too and a chain at the floor is materialized on fork); at least 3.
 */
function mergedBound(ctx: OpsContext): number {
  return Math.max(3, Math.min(MAX_CHAIN_MEMBERS, ctx.snapshotEvery - 1));
}

/**
 * The hard bound below the merged layout, where chains are bounded as the earlier implementation bounded them, by a
 * snapshot: its cadence (`-snapshot-every`, 16 by default), so a chain never holds more members than it let one hold.
 */
function snapshotBound(ctx: OpsContext): number {
  return Math.max(3, ctx.snapshotEvery);
}

/**
 * The hard bound: how many members the chains of this context may resolve through, by the layout the store had when
 * last read (merged segments at 3, snapshots below). A writer that finds its chain at the bound compacts inline before
 * its head (roomForHead); otherwise compaction runs off the hot path and keeps chains at the soft bound.
 */
export function chainBound(ctx: OpsContext): number {
  return mergesAllowed(ctx.store.layoutVersion) ? mergedBound(ctx) : snapshotBound(ctx);
}

/**
 * The soft bound of merged segments, two below their hard one (at least 2): a chain longer than this is compacted in
 * the background, after the write that grew it has been acknowledged. The slack lets the next write land while that
 * merge is still in flight without reaching the hard bound; a writer that does reach it waits for the merge or
 * merges inline. (One below would rewrite each txid a little less often, 5.5 times for 1,000 writes against 8, but
 * would leave no slack: every background merge would race the next writer.) Below the merged layout a chain this long
 * is where the store's layout is read again (an upgrade may have raised it); the snapshot is written only at
 * snapshotSoftBound.
 */
export function softBound(ctx: OpsContext): number {
  return Math.max(2, mergedBound(ctx) - 2);
}

/** The soft bound below the merged layout: two below the snapshot cadence, the same slack as merges have. */
function snapshotSoftBound(ctx: OpsContext): number {
  return Math.max(2, snapshotBound(ctx) - 2);
}

/** The head object just written and the ref that now names it. */
export interface HeadWritten {
  object: DataObject;
  current: VersionedRef;
}

/**
 * Writes the head object at `txid` create-only under the ref's epoch (bumping the epoch by compare-and-swap past an
 * orphan of a crashed attempt; `hooks` hear of each bump and order it among the caller's ref writers) and then records
 * it through `record`, which advances the ref by compare-and-swap. The one upload path of the at-rest checkpoint and
 * the session flush.
 */
export async function writeHead(
  ctx: OpsContext,
  db: string,
  branch: string,
  cur: VersionedRef,
  head: { kind: 'segment' | 'snapshot'; txid: number; file: string },
  record: (uploaded: VersionedRef) => Promise<VersionedRef>,
  hooks: EpochBumpHooks = {},
): Promise<HeadWritten> {
  const { lineage } = cur.ref;
  const keyFor = (epoch: number) =>
    head.kind === 'snapshot'
      ? snapshotKey(lineage, epoch, head.txid)
      : segmentKey(lineage, epoch, head.txid, head.txid);
  const up = await uploadAtHead(ctx, db, branch, cur, keyFor, { file: head.file, handOver: true }, hooks);
  const current = await record(up.current);
  return { object: parseDataKey(up.key) as DataObject, current };
}

/**
 * The trailing members of a chain (oldest first) to merge into one, or undefined. Nothing merges until the chain
 * outgrows `bound` (short histories never merge). Then, like a binary counter on
 * txid spans, the newest members merge while the one below spans no more than they do together, reaching down far
 * enough that the chain is back within the bound; so each txid is rewritten a few times (about 3 for 100 writes,
 * 8 for 1,000 with chains kept at 6), not once per write. The first member (the snapshot) is never merged, so a
 * merge costs the pages changed since, never the database.
 */
export function planMerge(members: readonly DataObject[], bound: number): DataObject[] | undefined {
  const last = members.length - 1;
  if (last < 2 || members.length <= bound) return undefined;
  const span = (m: DataObject) => m.maxTxid - m.minTxid + 1;
  let j = last;
  let acc = span(members[last] as DataObject);
  const take = () => {
    j--;
    acc += span(members[j] as DataObject);
  };
  for (;;) {
    while (j - 1 >= 1 && span(members[j - 1] as DataObject) <= acc) take();
    // Members before the run, plus the merged one, must fit the bound; the cascade then continues from there.
    if (j + 1 <= bound || j <= 1) break;
    take();
  }
  if (j >= last) return undefined;
  return members.slice(j);
}

/** What compaction did: the chain's members afterwards, and the merged segment (or the snapshot) if one was written. */
export interface Compaction {
  members: DataObject[];
  merged?: { object: DataObject; replaced: number; pages: number; bytes: number };
}

/**
 * Compacts the chain at `head` of db's `lineage` back to the soft bound when it is longer, under `epoch` (the ref's),
 * as the store's layout allows, read again first (an `offshoot upgrade` may have raised it since the store was opened):
 * at the merged layout planMerge picks a run, whose members are merged into one segment of this lineage (create-only)
 * ending at the head; below it, once the chain has outgrown snapshotSoftBound, the head's state is written as a
 * snapshot instead (snapshotAtHead), and the layout is never raised. The head, the ref and every other object are
 * untouched: a merged segment only ever wins dedup at its own max txid, over members that reproduce the same settled
 * state, so a flush racing the merge (which writes above the head) is never dropped nor overtaken, and a crash at any
 * point leaves either the members alone or the members and an equivalent merged segment. `members` is the chain at
 * head when the caller knows it (a session carries it forward), else it is resolved.
 */
export async function compactChain(
  ctx: OpsContext,
  db: string,
  lineage: string,
  head: number,
  epoch: number,
  members?: readonly DataObject[],
): Promise<Compaction> {
  const chain = members ?? (await new ChainResolver(ctx.store).resolve(lineage, head)).members;
  if (chain.length <= softBound(ctx)) return { members: [...chain] };
  if (!mergesAllowed(await ctx.store.refreshLayout())) return boundBySnapshot(ctx, db, lineage, head, epoch, chain);
  const run = planMerge(chain, softBound(ctx));
  if (run === undefined) return { members: [...chain] };
  const first = run[0] as DataObject;
  const key = segmentKey(lineage, epoch, first.minTxid, head);
  const written = await withTempDir(ctx, async (dir) => {
    const out = join(dir, 'merged.ltx');
    const file = await encodeMerged(ctx.store, run, out, ctx.now().getTime());
    try {
      await ctx.store.putData(key, { file: out, handOver: true });
    } catch (err) {
      // Only another merge of this very span at this epoch can own the key: it holds the same pages.
      if (!hasCode(err, 'ALREADY_EXISTS')) throw err;
    }
    return file;
  });
  const object = { ...(parseDataKey(key) as DataObject), size: written.size };
  return {
    members: [...chain.slice(0, chain.length - run.length), object],
    merged: { object, replaced: run.length, pages: written.pages, bytes: written.size },
  };
}

/**
 * Below the merged layout: a chain past snapshotSoftBound whose head object is the lineage's own gets a snapshot at
 * its head; anything else is left as it is (a fork not yet diverged reads its parent's chain, bounded there).
 */
async function boundBySnapshot(
  ctx: OpsContext,
  db: string,
  lineage: string,
  head: number,
  epoch: number,
  chain: readonly DataObject[],
): Promise<Compaction> {
  const last = chain[chain.length - 1];
  if (chain.length <= snapshotSoftBound(ctx) || last === undefined || last.lineage !== lineage || last.maxTxid !== head)
    return { members: [...chain] };
  const snap = await snapshotAtHead(ctx, db, lineage, head, epoch, chain);
  return {
    members: [snap.object],
    merged: { object: snap.object, replaced: chain.length, pages: snap.pages, bytes: snap.bytes },
  };
}

/**
 * The hard bound, checked by a writer before it writes a segment on top of `members` (the chain at `head`): when
 * background compaction fell behind and the chain is already at its bound, it is compacted inline first, so the head
 * lands within the bound. A chain below it is returned as it is, and the writer pays for its own pages only.
 */
export function roomForHead(
  ctx: OpsContext,
  db: string,
  lineage: string,
  head: number,
  epoch: number,
  members: readonly DataObject[],
): Promise<Compaction> {
  if (members.length < chainBound(ctx)) return Promise.resolve({ members: [...members] });
  return compactChain(ctx, db, lineage, head, epoch, members);
}

/**
 * The background compaction of one branch, off any writer's hot path (a CLI checkpoint after it has reported, the
 * daemon's janitor): reads the ref, resolves the chain at its head and compacts it (compactChain) under the ref's
 * epoch. Undefined when the branch is gone, leased or its chain is within the bound.
 */
export async function compactBranch(
  ctx: OpsContext,
  db: string,
  branch: string,
  resolver: ChainResolver = new ChainResolver(ctx.store),
): Promise<Compaction | undefined> {
  const got = await ctx.store.tryGetRef(db, branch);
  if (got === undefined) return undefined;
  const { ref } = got;
  // A branch under a live lease is left to its holder: a session merges its own chain, an at-rest op is brief.
  if (await leaseLiveNow(ctx, ref)) return undefined;
  const chain = await resolver.resolve(ref.lineage, ref.head_txid);
  if (chain.members.length <= softBound(ctx)) return undefined;
  return compactChain(ctx, db, ref.lineage, ref.head_txid, ref.epoch, chain.members);
}
