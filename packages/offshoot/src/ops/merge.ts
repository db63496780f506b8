import { existsSync } from 'node:fs';
import { fail } from '../core/errors.js';
import { named } from '../core/name-map.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import { jsonRow, type JsonRow } from '../sqlite/diff/diff-json.js';
import { renderDiffSql } from '../sqlite/diff/diff-sql.js';
import type { DiffResult } from '../sqlite/diff/diff-types.js';
import { checkClean, readSidecar, sameIdentity } from '../sqlite/checkout-sidecar.js';
import { quiesce } from '../sqlite/quiesce.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { headIdentity, readBranch, refuseForeignLease } from './helpers/branch/branch-ref.js';
import { checkpointCheckout } from './helpers/checkout/checkpoint-checkout.js';
import { checkoutDirty, checkpointIfDirty } from './helpers/checkout/checkpoint-if-dirty.js';
import { discardStaged, placeCheckout, type StagedCheckout } from './helpers/checkout/install-checkout.js';
import type { OpsContext } from './helpers/context/context.js';
import { checkoutPath } from './helpers/context/paths.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import { isHead, resolvePoint } from './helpers/history/point.js';
import { findMergeBase, type MergeBase, mergedMeta, mergeRecordMeta } from './helpers/merge/merge-base.js';
import { sideDiffs } from './helpers/merge/merge-diffs.js';
import { applyMerged, dropCheckout, stageMerged } from './helpers/merge/stage-merged.js';
import { readResolved, type ResolvedRow, resolution } from './helpers/merge/resolved-rows.js';
import { type MergeConflict, type MergedTable, type Prefer, threeWay } from './helpers/merge/three-way.js';
import { keepModifiedCheckout } from './helpers/safety/keep-diverged.js';
import { type Actor, HUMAN, refuseProtected, refuseUndoPointChange, vetWrite } from './helpers/safety/policy.js';
import { checkUndoSlot, keepSafetyFork } from './helpers/safety/safety-fork.js';

export type { ResolvedRow } from './helpers/merge/resolved-rows.js';
export { readResolved } from './helpers/merge/resolved-rows.js';
export type { ConflictKind, MergeConflict, MergedTable, Prefer } from './helpers/merge/three-way.js';

/** How merge is asked: how conflicts resolve, the new checkpoint's name, force onto a protected target, who asks. */
export interface MergeOptions {
  /**
   * Which side a conflicting row takes (those `resolved` does not settle); without it, a merge with conflicts
   * reports them and changes nothing, and one with some conflicts left out of `resolved` is refused.
   */
  prefer?: Prefer;
  /**
   * The caller's own rows for conflicts: each names a conflicting row by its table and key as the conflict report
   * gives them, and gives the full row to write there (null deletes it), values in diff's JSON encoding.
   */
  resolved?: readonly ResolvedRow[];
  /** The name of the target's new checkpoint (default `merge`, then `merge-2`, ...). */
  name?: string;
  force?: boolean;
  actor?: Actor;
}

/** What merge did, or (applied false) would have to resolve first. */
export interface MergeResult {
  db: string;
  source: string;
  target: string;
  /** The common ancestor the changes were taken from: how it was found, and which state it is. */
  base: { kind: MergeBase['kind']; at: string };
  /** True when the target moved to a new checkpoint holding the merge. */
  applied: boolean;
  /** The rows both sides changed differently since the base: left as they were unless `prefer` resolved them. */
  conflicts: MergeConflict[];
  /** The side the conflicts `resolved` did not settle took, when `prefer` settled any. */
  prefer?: Prefer;
  /** How many conflicts the caller's resolved rows settled, when any did. */
  resolved?: number;
  /** What the merge changed on the target, per table (what it would change, when not applied). */
  tables: MergedTable[];
  /** The target's head txid after the merge (its unchanged head when nothing was applied). */
  txid: number;
  /** The new checkpoint on the target, when applied. */
  checkpoint?: string;
  /** The undo point holding the target's head from before the merge (`<target>-pre-merge`), when applied. */
  backup?: string;
  /** Where the earlier undo point was kept, when it held the only copy of its state (see keepSafetyFork). */
  earlierBackup?: string;
}

/** A conflict as JSON: rows in diff's JSON encoding, null for the side that deleted the row. */
export interface JsonMergeConflict {
  table: string;
  kind: MergeConflict['kind'];
  key: JsonRow;
  base?: JsonRow;
  source: JsonRow | null;
  target: JsonRow | null;
}

/** The JSON of a merge every surface prints or sends (snake_case keys; row values as diff's JSON has them). */
export interface JsonMerge {
  db: string;
  source: string;
  target: string;
  base: MergeResult['base'];
  applied: boolean;
  prefer?: Prefer;
  resolved?: number;
  txid: number;
  checkpoint?: string;
  backup?: string;
  earlier_backup?: string;
  tables: MergedTable[];
  conflicts: JsonMergeConflict[];
}

/** A merge's result as JSON (the CLI's --json, the wire's merge op, the MCP tool's structured result). */
export function mergeToJson(r: MergeResult): JsonMerge {
  return {
    db: r.db,
    source: r.source,
    target: r.target,
    base: r.base,
    applied: r.applied,
    ...(r.prefer !== undefined ? { prefer: r.prefer } : {}),
    ...(r.resolved !== undefined ? { resolved: r.resolved } : {}),
    txid: r.txid,
    ...(r.checkpoint !== undefined ? { checkpoint: r.checkpoint } : {}),
    ...(r.backup !== undefined ? { backup: r.backup } : {}),
    ...(r.earlierBackup !== undefined ? { earlier_backup: r.earlierBackup } : {}),
    tables: r.tables,
    conflicts: r.conflicts.map((c) => ({
      table: c.table,
      kind: c.kind,
      key: jsonRow(c.key),
      ...(c.base !== undefined ? { base: jsonRow(c.base) } : {}),
      source: c.source !== undefined ? jsonRow(c.source) : null,
      target: c.target !== undefined ? jsonRow(c.target) : null,
    })),
  };
}

/**
 * `offshoot merge db@src --into tgt`: a three-way merge, row by row, of what the source (its head, or the checkpoint
 * or moment `src` names) changed since its common
 * ancestor with the target (the state the last merge of it took, else the fork point) into the target. Rows only the
 * source changed are taken; rows both changed to different values are conflicts, reported with nothing changed
 * unless each is settled, by the caller's own row for it (`resolved`) or by `prefer` picking a side; some settled
 * and some not refuses MERGE_CONFLICT, so does a schema change on both sides. The merged rows land as a new
 * checkpoint on the target, recording the source state it took (for the next merge's ancestor), and the previous head
 * is kept as `<target>-pre-merge`, exactly as promote keeps its undo point. A protected target takes force, decided
 * by the safety policy for whoever asks. The source is unchanged.
 */
export async function merge(ctx: OpsContext, src: Target, into: string, opts: MergeOptions = {}): Promise<MergeResult> {
  refuseMergeArgs(src, into, opts);
  return withBranchLease(ctx, { db: src.db, branch: into }, () => mergeLeased(ctx, src, into, opts));
}

/**
 * Runs every refusal `merge` would meet before it reads a row, on the branches as they stand, and changes nothing (no
 * lease, no write): whether this actor's merge would go ahead. Conflicts are not refusals: a merge that would find
 * some still goes ahead, to list them. A caller asks it before it asks its human (`check` on the wire).
 */
export async function checkMerge(
  ctx: OpsContext,
  src: Target,
  into: string,
  opts: Omit<MergeOptions, 'prefer'> = {},
): Promise<void> {
  // Whether each resolved row names a conflict is known only once the rows are read: the merge finds out.
  refuseMergeArgs(src, into, opts);
  const source = await readBranch(ctx, src.db, src.branch);
  const tgt = await readBranch(ctx, src.db, into);
  const vet = await vetMerge(ctx, src, into, tgt.ref, opts);
  checkpointName(tgt.ref, src.db, into, opts.name);
  await sourceState(ctx, src, source.ref);
  const target = { db: src.db, branch: into };
  if (src.checkpoint === undefined && (await checkoutDirty(ctx, src, source.ref))) await vet(src)(source.ref);
  if (await checkoutDirty(ctx, target, tgt.ref)) await vet(target)(tgt.ref);
}

/** The refusals of a merge's arguments alone. */
function refuseMergeArgs(src: Target, into: string, opts: Pick<MergeOptions, 'name' | 'resolved'>): void {
  validateName('branch', into);
  if (opts.resolved !== undefined) readResolved(opts.resolved);
  if (opts.name !== undefined) validateName('checkpoint', opts.name);
  if (into === src.branch)
    throw fail('INVALID_ARGUMENT', `cannot merge ${src.db}@${src.branch} into itself`, {
      hint: 'name a different --into branch',
      hints: { agent: 'name a different target branch', sdk: 'name a different target branch' },
    });
}

/** The refusals of a merge onto the target `ref`, before anything is written; returns the rule of its checkpoints. */
async function vetMerge(
  ctx: OpsContext,
  src: Target,
  into: string,
  ref: Ref,
  opts: MergeOptions,
): Promise<(t: Target) => (ref: Ref) => Promise<void>> {
  const actor = opts.actor ?? HUMAN;
  const human = `offshoot merge ${src.db}@${src.branch} --into ${into} --force`;
  refuseProtected(ref, src.db, into, 'merge into', opts.force ?? false, actor, human);
  await refuseUndoPointChange(ctx, src.db, into, ref, actor, 'merging into', human);
  await refuseForeignLease(ctx, src.db, into, ref, 'merge into');
  await checkUndoSlot(ctx, src.db, into, 'pre-merge');
  return (t) => vetWrite(ctx, t, actor, t.branch === into ? 'explicit' : 'implicit', human);
}

/**
 * The source state a merge takes: the branch's head, or the checkpoint or moment (`tx:42`, `at:<RFC 3339>`) the
 * source names, as a ref moved to that state (a head it is not has no checkout a merge may read in place).
 */
async function sourceState(ctx: OpsContext, src: Target, ref: Ref): Promise<Ref> {
  if (src.checkpoint === undefined) return ref;
  const p = await resolvePoint(ctx, src, ref, src.checkpoint);
  return isHead(p, ref) ? ref : { ...ref, lineage: p.lineage, head_txid: p.txid };
}

/** The name of the merge's checkpoint: the one asked for (ALREADY_EXISTS when taken), else the first free `merge[-n]`. */
function checkpointName(ref: Ref, db: string, into: string, asked: string | undefined): string {
  if (asked !== undefined) {
    if (named(ref.checkpoints, asked) !== undefined)
      throw fail('ALREADY_EXISTS', `checkpoint "${asked}" already exists on ${db}@${into}`, {
        hint: 'pick another checkpoint name',
      });
    return asked;
  }
  for (let n = 1; ; n++) {
    const name = n === 1 ? 'merge' : `merge-${n}`;
    if (named(ref.checkpoints, name) === undefined) return name;
  }
}

/** A merge computed and not applied (previewMerge): what it would take, and what the target itself changed. */
export interface MergePreview extends MergeResult {
  /** The target's own row changes since the common state, per table: the merge keeps them (conflicting rows too). */
  kept: MergedTable[];
}

/** A merge preview as JSON: the merge's JSON and the target's own changes (the dashboard's /api/merge). */
export function mergePreviewToJson(p: MergePreview): JsonMerge & { kept: MergedTable[] } {
  return { ...mergeToJson(p), kept: p.kept };
}

/**
 * The merge `merge` would make of the source's durable state into the target's durable head, computed and not
 * applied: no lease, no checkpoint, nothing written (the dashboard's preview). Uncheckpointed writes in either
 * checkout are not in it, and refusals of the write itself (protection, leases) are not asked: see checkMerge.
 * `settle` previews the conflicts settled as merge would settle them (a resolved row naming no conflict is refused
 * as merge refuses it; conflicts left unsettled are listed, not refused).
 */
export async function previewMerge(
  ctx: OpsContext,
  src: Target,
  into: string,
  settle: Pick<MergeOptions, 'prefer' | 'resolved'> = {},
): Promise<MergePreview> {
  refuseMergeArgs(src, into, settle);
  const source = await readBranch(ctx, src.db, src.branch);
  const tgt = await readBranch(ctx, src.db, into);
  const from = { branch: src.branch, ref: await sourceState(ctx, src, source.ref) };
  const { result, targetDiff } = await threeWayOf(ctx, src, from, into, tgt.ref, settle, false);
  const kept = targetDiff.tables
    .filter((t) => t.added.length + t.changed.length + t.removed.length > 0)
    .map((t) => ({ table: t.table, inserted: t.added.length, updated: t.changed.length, deleted: t.removed.length }));
  return { ...result, kept };
}

/** The three-way merge of the source state `from` into the target's head `ref`, as a result not yet applied. */
async function threeWayOf(
  ctx: OpsContext,
  src: Target,
  from: { branch: string; ref: Ref },
  into: string,
  ref: Ref,
  settle: Pick<MergeOptions, 'prefer' | 'resolved'>,
  leased: boolean,
): Promise<{ base: MergeBase; merged: ReturnType<typeof threeWay>; result: MergeResult; targetDiff: DiffResult }> {
  const resolver = new ChainResolver(ctx.store, { sizes: false });
  const base = await findMergeBase(src.db, from, { branch: into, ref }, resolver);
  const rows = settle.resolved ?? [];
  const diffs = await sideDiffs(
    ctx,
    src.db,
    base.chain,
    { ...from, chain: await resolver.resolve(from.ref.lineage, from.ref.head_txid), leased: false },
    { branch: into, ref, chain: await resolver.resolve(ref.lineage, ref.head_txid), leased },
    new Set(rows.map((r) => r.table)),
  );
  const prefer = settle.prefer;
  const merged = threeWay(
    diffs.source,
    diffs.target,
    { prefer, ...(rows.length > 0 ? { resolution: resolution(rows, diffs.resolvable) } : {}) },
    diffs.declaredKeys,
  );
  const result: MergeResult = {
    db: src.db,
    source: src.branch,
    target: into,
    base: { kind: base.kind, at: base.at },
    applied: false,
    conflicts: merged.conflicts,
    ...(prefer !== undefined && merged.conflicts.length > merged.resolved ? { prefer } : {}),
    ...(merged.resolved > 0 ? { resolved: merged.resolved } : {}),
    tables: merged.tables,
    txid: ref.head_txid,
  };
  return { base, merged, result, targetDiff: diffs.target };
}

async function mergeLeased(ctx: OpsContext, src: Target, into: string, opts: MergeOptions): Promise<MergeResult> {
  const target: Target = { db: src.db, branch: into };
  let tgt = await readBranch(ctx, src.db, into);
  let source = await readBranch(ctx, src.db, src.branch);
  const vet = await vetMerge(ctx, src, into, tgt.ref, opts);
  const name = checkpointName(tgt.ref, src.db, into, opts.name);
  // Both heads must hold what their checkouts committed: the merge reads durable states only. A source named at a
  // checkpoint or moment is that durable state already.
  if (src.checkpoint === undefined && (await checkpointIfDirty(ctx, src, source.ref, vet(src))))
    source = await readBranch(ctx, src.db, src.branch);
  if (await checkpointIfDirty(ctx, target, tgt.ref, vet(target))) tgt = await readBranch(ctx, src.db, into);
  const from = { branch: src.branch, ref: await sourceState(ctx, src, source.ref) };
  const { base, merged, result } = await threeWayOf(ctx, src, from, into, tgt.ref, opts, true);
  if (merged.unresolved.length > 0) {
    if (merged.resolved === 0) return result;
    refusePartial(src, into, merged.unresolved, merged.conflicts.length);
  }
  const sql = renderDiffSql(merged.apply);
  if (sql === '') return result;
  const what = `merge ${src.db}@${src.branch} -> ${into}`;
  const path = checkoutPath(ctx.checkoutRoot, src.db, into);
  // A clean checkout at the head takes the merge in place (one transaction: a failure leaves it as it was), as a
  // checkpoint would; otherwise the head is staged beside it, and what the old file held no checkpoint has is kept.
  const sc = existsSync(path) ? readSidecar(path) : undefined;
  const inPlace = sameIdentity(sc, headIdentity(tgt.ref)) && (await checkClean(path, sc)) === 'clean';
  let staged: StagedCheckout | undefined;
  if (!inPlace) {
    if (existsSync(path)) {
      quiesce(path);
      await keepModifiedCheckout(ctx, target, tgt.ref);
    }
    staged = await stageMerged(ctx, src.db, into, tgt.ref, sql, what);
  }
  // The undo point is written last before the move, and put back if the move fails (as promote's is).
  let undo: Awaited<ReturnType<typeof keepSafetyFork>>;
  try {
    undo = await keepSafetyFork(ctx, src.db, into, tgt.ref, 'pre-merge', new ChainResolver(ctx.store));
  } catch (err) {
    await discardStaged(staged);
    throw err;
  }
  let txid: number;
  let changed = false;
  try {
    if (staged !== undefined) {
      changed = true;
      await placeCheckout(staged);
    } else {
      applyMerged(path, sql, what, `${src.db}@${into}`);
      changed = true;
    }
    // The checkpoint's record is the merge's: its source state, the common state and the undo point.
    txid = (
      await checkpointCheckout(ctx, target, name, undefined, vet(target), {
        own: mergedMeta(from),
        op: 'merge',
        detail: {
          from: `${src.db}@${src.branch}@${from.ref.head_txid}`,
          undo: undo.name,
          meta: mergeRecordMeta(from, base, merged.resolved),
        },
      })
    ).txid;
  } catch (err) {
    await undo.restore();
    // The checkout was clean at the head before: a merged file no checkpoint recorded goes, the head comes back.
    if (changed) await dropCheckout(path);
    throw err;
  }
  await undo.settle();
  return {
    ...result,
    applied: true,
    txid,
    checkpoint: name,
    backup: undo.name,
    ...(undo.earlier !== undefined ? { earlierBackup: undo.earlier } : {}),
  };
}

/** MERGE_CONFLICT: the caller resolved some conflicts and left `left` of the `total` to nothing. */
function refusePartial(src: Target, into: string, left: readonly MergeConflict[], total: number): never {
  const shown = left.slice(0, 5).map((c) => `${c.table} ${JSON.stringify(jsonRow(c.key))} (${c.kind})`);
  const more = left.length > shown.length ? ` and ${left.length - shown.length} more` : '';
  throw fail(
    'MERGE_CONFLICT',
    `merge ${src.db}@${src.branch} -> ${into}: ${left.length} of ${total} conflicting row(s) have no resolved row: ${shown.join(', ')}${more}; nothing was merged`,
    {
      hint: 'add a row for each of them to the --resolve file, or add --prefer source|target to settle the rest',
      hints: {
        agent: 'add a row for each of them to resolved, or give prefer ("source" or "target") to settle the rest',
        sdk: 'add a row for each of them to resolved, or pass prefer ("source" or "target") to settle the rest',
      },
    },
  );
}
