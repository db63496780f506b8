import { fail, hasCode } from '../../../core/errors.js';
import type { Meta } from '../../../core/meta.js';
import type { Ref } from '../../../core/ref.js';
import type { ChainResolver, ResolvedChain } from '../../../store/chain-resolver.js';

/** The checkpoint meta a merge records on the target: the source branch it took, and the source state it took. */
export const MERGED_FROM_KEY = 'offshoot.merged_from';
/** The source's lineage at the merge (with MERGED_TXID_KEY, the state the target now contains). */
export const MERGED_LINEAGE_KEY = 'offshoot.merged_lineage';
/** The source's head txid at the merge. */
export const MERGED_TXID_KEY = 'offshoot.merged_txid';

/** The log record of a merge names the common state it merged from here (`<branch>@<txid>`, as MergeBase.at). */
export const MERGE_BASE_KEY = 'offshoot.merge_base';

/** The log record of a merge counts the conflicting rows the caller's own resolved rows settled, when any did. */
export const MERGE_RESOLVED_KEY = 'offshoot.merge_resolved';

/** A branch by name and ref, as a merge reads it (a source named at a moment: its ref moved to that state). */
export interface MergeSide {
  branch: string;
  ref: Ref;
}

/**
 * The common ancestor of a merge: the state both sides changed from. `kind` says how it was found: a merge into the
 * target recorded the source state it took (`merge`), one side is a fork of the other (`fork`), or both are forks of
 * one branch at one state (`siblings`). `at` names it for people (`<branch>@<txid>`).
 */
export interface MergeBase {
  kind: 'merge' | 'fork' | 'siblings';
  at: string;
  chain: ResolvedChain;
}

/** The meta a merge of `source` at its head records on the target's new checkpoint (see findMergeBase). */
export function mergedMeta(source: MergeSide): Meta {
  return {
    [MERGED_FROM_KEY]: source.branch,
    [MERGED_LINEAGE_KEY]: source.ref.lineage,
    [MERGED_TXID_KEY]: String(source.ref.head_txid),
  };
}

/**
 * The meta of a merge's log record: the source state it took (mergedMeta), the common state it merged from, and how
 * many conflicting rows the caller resolved with rows of its own.
 */
export function mergeRecordMeta(source: MergeSide, base: MergeBase, resolved: number): Meta {
  return {
    ...mergedMeta(source),
    [MERGE_BASE_KEY]: base.at,
    ...(resolved > 0 ? { [MERGE_RESOLVED_KEY]: String(resolved) } : {}),
  };
}

/**
 * The latest common ancestor of `source` and `target`: the source state the latest merge of it into the target
 * took (a checkpoint of the target carrying mergedMeta, while the source is still on that lineage at or past that
 * txid and the state is still in the store), else the fork point (either side a fork of the other, or both forks of
 * one branch through the same base pointer). INVALID_ARGUMENT when the two share no point offshoot can name.
 */
export async function findMergeBase(
  db: string,
  source: MergeSide,
  target: MergeSide,
  resolver: ChainResolver,
): Promise<MergeBase> {
  const merged = latestMerge(source, target);
  if (merged !== undefined) {
    try {
      return {
        kind: 'merge',
        at: `${source.branch}@${merged}`,
        chain: await resolver.resolve(source.ref.lineage, merged),
      };
    } catch (err) {
      // A compaction merged the segment that state ended at, and GC took the rest: the fork point still holds.
      if (!hasCode(err, 'CORRUPT')) throw err;
    }
  }
  const fork = forkPoint(db, source, target);
  if (fork !== undefined && fork.txid > source.ref.head_txid)
    // A source named at a moment before the fork point holds none of its own changes: merging it would undo them.
    throw fail(
      'INVALID_ARGUMENT',
      `${db}@${source.branch} at txid ${source.ref.head_txid} is older than its common state with ${db}@${target.branch} (${fork.at})`,
      {
        hint: `name a state of ${db}@${source.branch} at or after txid ${fork.txid} ('offshoot log ${db}@${source.branch}' lists them)`,
        hints: {
          agent: `name a state of ${db}@${source.branch} at or after txid ${fork.txid} (offshoot_log lists them)`,
          sdk: `name a state of ${db}@${source.branch} at or after txid ${fork.txid}`,
        },
      },
    );
  if (fork !== undefined) return { ...fork, chain: await resolver.resolve(fork.lineage, fork.txid) };
  throw fail(
    'INVALID_ARGUMENT',
    `${db}@${source.branch} and ${db}@${target.branch} share no fork point offshoot can name, so there is no common state to merge from`,
    {
      hint: `merge a fork into the branch it was forked from (or back), or two forks made of one branch at one head; compare them with 'offshoot diff ${db}@${target.branch} ${db}@${source.branch}'`,
      hints: {
        agent: 'merge a fork into the branch it was forked from, or two forks of one branch made at one head',
        sdk: 'merge a fork into the branch it was forked from, or two forks of one branch made at one head',
      },
    },
  );
}

/** The source txid of the latest merge of `source` into `target` the target's checkpoints record, if still usable. */
function latestMerge(source: MergeSide, target: MergeSide): number | undefined {
  let best: { at: number; txid: number } | undefined;
  for (const cp of Object.values(target.ref.checkpoints)) {
    const m = cp.meta;
    if (m?.[MERGED_FROM_KEY] !== source.branch || m[MERGED_LINEAGE_KEY] !== source.ref.lineage) continue;
    const txid = Number(m[MERGED_TXID_KEY]);
    if (!Number.isSafeInteger(txid) || txid > source.ref.head_txid || cp.txid > target.ref.head_txid) continue;
    if (best === undefined || cp.txid > best.at) best = { at: cp.txid, txid };
  }
  return best?.txid;
}

/** Where one side was forked from the other, or both from one state: a lineage and txid reading as that state. */
function forkPoint(
  db: string,
  source: MergeSide,
  target: MergeSide,
): { kind: 'fork' | 'siblings'; at: string; lineage: string; txid: number } | undefined {
  const sFork = source.ref.checkpoints.fork;
  const tFork = target.ref.checkpoints.fork;
  if (sFork !== undefined && source.ref.parent === `${db}@${target.branch}@${sFork.txid}`)
    return { kind: 'fork', at: `${target.branch}@${sFork.txid}`, lineage: source.ref.lineage, txid: sFork.txid };
  if (tFork !== undefined && target.ref.parent === `${db}@${source.branch}@${tFork.txid}`)
    return { kind: 'fork', at: `${source.branch}@${tFork.txid}`, lineage: target.ref.lineage, txid: tFork.txid };
  const sb = source.ref.base;
  const tb = target.ref.base;
  if (
    sFork !== undefined &&
    tFork !== undefined &&
    sb !== undefined &&
    tb !== undefined &&
    sb.lineage === tb.lineage &&
    sb.txid === tb.txid &&
    sb.txid === sFork.txid &&
    tb.txid === tFork.txid &&
    source.ref.parent !== undefined &&
    source.ref.parent === target.ref.parent
  )
    return { kind: 'siblings', at: source.ref.parent.slice(db.length + 1), lineage: sb.lineage, txid: sb.txid };
  return undefined;
}
