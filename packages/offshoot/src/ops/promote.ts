import { fail, type OffshootError } from '../core/errors.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { leaseLiveNow, readBranch, refuseForeignLease } from './helpers/branch/branch-ref.js';
import { checkoutDirty, checkpointIfDirty } from './helpers/checkout/checkpoint-if-dirty.js';
import { checkoutWork } from './helpers/checkout/checkout-work.js';
import { checkoutPath } from './helpers/context/paths.js';
import { withBranchLease } from './helpers/lease/branch-lease.js';
import type { OpsContext } from './helpers/context/context.js';
import { casRepoint } from './helpers/branch/repoint.js';
import { newLineageAt } from './helpers/chain/new-lineage.js';
import { refreshCheckout } from './helpers/checkout/refresh-checkout.js';
import { type Actor, HUMAN, refuseProtected, refuseUndoPointChange, vetWrite } from './helpers/safety/policy.js';
import { keepModifiedCheckout } from './helpers/safety/keep-diverged.js';
import { checkUndoSlot, keepSafetyFork } from './helpers/safety/safety-fork.js';
import { logged } from './helpers/history/record.js';

/** What promote did. */
export interface PromoteResult {
  db: string;
  source: string;
  target: string;
  txid: number;
  backup: string;
  /** Where the earlier undo point was kept, when it held the only copy of its state (see keepSafetyFork). */
  earlierBackup?: string;
  path: string;
  refreshed: boolean;
  /** Set when the target moved but its existing checkout could not be refreshed (say, BUSY): the command failed. */
  refreshError?: OffshootError;
  mode: 'shared' | 'materialized';
  /**
   * The source was under a live lease someone else holds (a daemon session): its last flushed head was promoted,
   * not writes that session had not flushed yet. A surface that reaches that daemon flushes it first.
   */
  sourceLive: boolean;
}

/**
 * `offshoot promote db@src --onto tgt`: repoints the (existing) target at a fresh lineage reading through a base
 * pointer at the source's head (or a copy with --materialize). The source is unchanged; the target keeps its TTL
 * and protection, its checkpoints reset to `promote`, and its old head — with any uncheckpointed checkout edits —
 * is kept as `<target>-pre-promote`. With `ifHead`, a compare-and-swap on the target: it promotes only onto that
 * head txid, with nothing uncheckpointed in the target's checkout, and refuses BASE_MOVED otherwise.
 */
export async function promote(
  ctx: OpsContext,
  src: Target,
  onto: string,
  opts: PromoteOptions = {},
): Promise<PromoteResult> {
  refuseSelfPromote(src, onto);
  return withBranchLease(ctx, { db: src.db, branch: onto }, () => promoteLeased(ctx, src, onto, opts));
}

/**
 * Runs every refusal `promote` would on the branches as they stand, and changes nothing (no lease, no write):
 * whether this actor's promote would go ahead. A caller asks it before it asks its human (`check` on the wire).
 */
export async function checkPromote(
  ctx: OpsContext,
  src: Target,
  onto: string,
  opts: Omit<PromoteOptions, 'materialize'> = {},
): Promise<void> {
  refuseSelfPromote(src, onto);
  const source = await readBranch(ctx, src.db, src.branch);
  const tgt = await readBranch(ctx, src.db, onto);
  const vet = await vetPromote(ctx, src, onto, tgt.ref, source.ref, opts);
  const target = { db: src.db, branch: onto };
  if (await checkoutDirty(ctx, src, source.ref)) await vet.write(src)(source.ref);
  if (await checkoutDirty(ctx, target, tgt.ref)) await vet.write(target)(tgt.ref);
}

function refuseSelfPromote(src: Target, onto: string): void {
  validateName('branch', onto);
  if (onto === src.branch)
    throw fail('INVALID_ARGUMENT', `cannot promote ${src.db}@${src.branch} onto itself`, {
      hint: 'name a different --onto branch',
      hints: { agent: 'name a different target branch', sdk: 'name a different target branch' },
    });
}

/**
 * The refusals of a promote of `source` onto the target `ref`, in order (the compare-and-swap of `ifHead` among
 * them); `write` is the rule of its implicit checkpoints.
 */
async function vetPromote(
  ctx: OpsContext,
  src: Target,
  onto: string,
  ref: Ref,
  source: Ref,
  opts: Omit<PromoteOptions, 'materialize'>,
): Promise<{ write: (t: Target) => (ref: Ref) => Promise<void> }> {
  const actor = opts.actor ?? HUMAN;
  const human = `offshoot promote ${src.db}@${src.branch} --onto ${onto} --force`;
  refuseProtected(ref, src.db, onto, 'promote onto', opts.force ?? false, actor, human);
  await refuseUndoPointChange(ctx, src.db, onto, ref, actor, 'promoting onto', human);
  await refuseForeignLease(ctx, src.db, onto, ref, 'promote onto');
  if (opts.ifHead !== undefined) await refuseMovedTarget(ctx, src, onto, ref, source, opts.ifHead);
  await checkUndoSlot(ctx, src.db, onto, 'pre-promote');
  return { write: (t) => vetWrite(ctx, t, actor, 'implicit', human) };
}

/** How promote is asked: force onto a protected target, materialize a copy, who asks, and the target's expected head. */
export interface PromoteOptions {
  force?: boolean;
  materialize?: boolean;
  actor?: Actor;
  /** The head txid the target must still be at (what a run forked from); BASE_MOVED otherwise. */
  ifHead?: number;
}

/**
 * Why the target no longer holds the state a fork of its head made at `txid` started from, though its head txid is
 * `txid` again (a txid can come back with another state: a rollback and as many writes, a promote of a branch whose
 * head has that number); undefined when it does. Known only for a shared fork of the target made at exactly that
 * txid (its parent and base pointer say so): the target's lineage must still reach the fork's base pointer there.
 * For any other source (a fork of a checkpoint, a materialized fork, an unrelated branch) the txid is all there is.
 */
async function forkPointGone(
  ctx: OpsContext,
  src: Target,
  onto: string,
  target: Ref,
  source: Ref,
  txid: number,
): Promise<string | undefined> {
  const base = source.base;
  if (source.parent !== `${src.db}@${onto}@${txid}` || base === undefined || base.txid !== txid) return undefined;
  const now = await new ChainResolver(ctx.store).collapseBase(target.lineage, txid);
  if (now.lineage === base.lineage) return undefined;
  return `its head is txid ${txid} again, but no longer the state ${src.db}@${src.branch} was forked from`;
}

/**
 * The compare-and-swap of `ifHead`, before anything is written: the target must still be at that head (holding the
 * state a fork of it started from, where the source is one: forkPointGone), and its checkout must hold nothing a
 * checkpoint lacks (promote would checkpoint it, moving the head). BASE_MOVED otherwise.
 */
async function refuseMovedTarget(
  ctx: OpsContext,
  src: Target,
  onto: string,
  target: Ref,
  source: Ref,
  ifHead: number,
): Promise<void> {
  const why =
    target.head_txid !== ifHead
      ? `its head is now txid ${target.head_txid}`
      : ((await forkPointGone(ctx, src, onto, target, source, ifHead)) ??
        ((await checkoutWork(checkoutPath(ctx.checkoutRoot, src.db, onto))) !== undefined
          ? 'its checkout holds writes no checkpoint has'
          : undefined));
  if (why === undefined) return;
  const to = `${src.db}@${onto}`;
  const from = `${src.db}@${src.branch}`;
  throw fail('BASE_MOVED', `${to} moved since txid ${ifHead}: ${why}; nothing was promoted`, {
    hint: `compare (offshoot diff ${to} ${from}), fork ${to} again and redo the work on its new head, or promote without --if-head to replace its head anyway (kept as an undo point)`,
    hints: {
      agent: `compare (offshoot_diff ${to} with ${from}) and redo the work on a new fork of ${to}; promote without if_head only if the human wants its head replaced anyway`,
      sdk: `fork ${to} again and redo the work on its new head, or promote without if_head (ifHead) to replace its head anyway (kept as an undo point)`,
    },
  });
}

async function promoteLeased(ctx: OpsContext, src: Target, onto: string, opts: PromoteOptions): Promise<PromoteResult> {
  let source = await readBranch(ctx, src.db, src.branch);
  let tgt = await readBranch(ctx, src.db, onto);
  const vet = await vetPromote(ctx, src, onto, tgt.ref, source.ref, opts);
  if (await checkpointIfDirty(ctx, src, source.ref, vet.write(src))) source = await readBranch(ctx, src.db, src.branch);
  // The refresh below replaces the target's checkout, so its uncheckpointed edits go into the undo point first.
  const target = { db: src.db, branch: onto };
  if (await checkpointIfDirty(ctx, target, tgt.ref, vet.write(target))) tgt = await readBranch(ctx, src.db, onto);
  // What is promoted becomes the target's state: an ephemeral source is kept first. An ephemeral target stays one.
  if (await ctx.ephemeral?.keep(src)) source = await readBranch(ctx, src.db, src.branch);
  const held = ctx.ephemeral?.holds(src.db, onto) ? ctx.ephemeral : undefined;
  const resolver = new ChainResolver(ctx.store);
  const txid = source.ref.head_txid;
  const fresh = await newLineageAt(ctx, src.db, resolver, source.ref.lineage, txid, {
    materialize: opts.materialize ?? false,
    ...(held !== undefined ? { newId: () => held.newLineage() } : {}),
  });
  const now = ctx.now().toISOString();
  let next: Ref = {
    ...tgt.ref,
    lineage: fresh.lineage,
    epoch: 1,
    head_txid: txid,
    head_epoch: 1,
    checkpoints: { promote: { txid, epoch: 1, created_at: now } },
    parent: `${src.db}@${src.branch}@${txid}`,
    touched_at: now,
  };
  delete next.base;
  if (fresh.base) next.base = fresh.base;
  delete next.lease_holder;
  delete next.lease_expiry;
  // The undo point is written last, and put back if the repoint fails: a failed promote keeps the previous one.
  const undo = await keepSafetyFork(ctx, src.db, onto, tgt.ref, 'pre-promote', resolver);
  try {
    next = await logged(ctx, src.db, onto, 'promote', tgt.ref, next, {
      from: next.parent ?? `${src.db}@${src.branch}`,
      undo: undo.name,
    });
    await casRepoint(ctx, src.db, onto, tgt.etag, next, 'promote');
  } catch (err) {
    await undo.restore();
    throw err;
  }
  await undo.settle();
  const refreshed = await refreshCheckout(
    ctx,
    src.db,
    onto,
    next,
    `promoted from ${src.db}@${src.branch}`,
    `promote ${src.db}@${src.branch} -> ${onto}`,
    () => keepModifiedCheckout(ctx, { db: src.db, branch: onto }, next),
  );
  return {
    db: src.db,
    source: src.branch,
    target: onto,
    txid,
    backup: undo.name,
    ...(undo.earlier !== undefined ? { earlierBackup: undo.earlier } : {}),
    path: refreshed.path,
    refreshed: refreshed.refreshed,
    ...(refreshed.error ? { refreshError: refreshed.error } : {}),
    mode: fresh.mode,
    sourceLive: source.ref.lease_holder !== ctx.holder && (await leaseLiveNow(ctx, source.ref)),
  };
}
