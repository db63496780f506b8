import { fail, hasCode } from '../../../core/errors.js';
import { logged } from '../history/record.js';
import type { Ref } from '../../../core/ref.js';
import type { ChainResolver } from '../../../store/chain-resolver.js';
import { refuseForeignLease } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { newLineageAt } from '../chain/new-lineage.js';
import { refreshCheckout } from '../checkout/refresh-checkout.js';
import { keepEarlierUndoPoint } from './undo-chain.js';
import {
  UNDO_KIND_KEY as KIND_KEY,
  UNDO_OF_KEY as OF_KEY,
  type UndoKind,
  undoPointName,
} from '../branch/undo-point-names.js';

/**
 * Whether a ref is an undo point offshoot made for `branch` and nobody has used since: it carries the meta offshoot
 * writes (`offshoot.safety` = kind, `offshoot.of` = branch), its parent is that branch at its `fork` checkpoint, and
 * its head is still there with no checkpoint but `fork` (and a compaction's `compact`). The rule reads undo points of every earlier version the
 * same way (they carry the same meta); a branch that fails it — a user's own, or an undo point someone checkpointed
 * into, promoted onto or flushed a session to — holds data of its own and is never replaced.
 */
export function isUntouchedUndoPoint(ref: Ref, db: string, branch: string, kind: UndoKind): boolean {
  if (ref.meta?.[KIND_KEY] !== kind || ref.meta[OF_KEY] !== branch) return false;
  const fork = ref.checkpoints.fork;
  if (fork === undefined || ref.parent !== `${db}@${branch}@${fork.txid}`) return false;
  // A compaction rewrites storage, not content: its `compact` checkpoint at the same head does not count as a use.
  return Object.entries(ref.checkpoints).every(
    ([name, cp]) => (name === 'fork' || name === 'compact') && cp.txid === ref.head_txid,
  );
}

/** Refuses replacing a branch unless it is an untouched undo point nobody has claimed (protected, or leased by another). */
async function refuseReplacing(
  ctx: OpsContext,
  db: string,
  branch: string,
  kind: UndoKind,
  name: string,
  ref: Ref,
): Promise<void> {
  if (!isUntouchedUndoPoint(ref, db, branch, kind)) {
    const why =
      ref.meta?.[KIND_KEY] === kind && ref.meta[OF_KEY] === branch
        ? `it was an undo point, but it has changed since offshoot kept it`
        : `it is not an undo point offshoot made`;
    throw fail('ALREADY_EXISTS', `${db}@${name} already exists and ${why}, so the new undo point cannot replace it`, {
      hint: `keep its data under another name first (offshoot fork ${db}@${name} <new-name>), then destroy ${db}@${name} and retry`,
    });
  }
  if (ref.protected) {
    throw fail('PROTECTED', `${db}@${name} is protected, so the new undo point cannot replace it`, {
      hint: `promote or destroy ${db}@${name} (with --force) first, or unprotect it`,
      hints: {
        agent: `ask the human to promote, destroy or unprotect ${db}@${name} first`,
        sdk: `promote or destroy ${db}@${name} (with force) first, or unprotect it`,
      },
    });
  }
  await refuseForeignLease(ctx, db, name, ref, 'replace undo point');
}

/**
 * Refuses, before anything is written, an operation whose undo point could not be kept: `<branch>-<kind>` exists and
 * is not an untouched, unclaimed undo point of that branch.
 */
export async function checkUndoSlot(ctx: OpsContext, db: string, branch: string, kind: UndoKind): Promise<void> {
  const name = undoPointName(branch, kind);
  const old = await ctx.store.tryGetRef(db, name);
  if (old) await refuseReplacing(ctx, db, branch, kind, name, old.ref);
}

/** The shortest life an undo point gets: at least a day. */
export const SAFETY_FORK_TTL = '24h0m0s';

/** The undo-point ref for `branch`'s head `ref`, on a fresh lineage. */
export function undoPointRef(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  kind: UndoKind,
  lineage: string,
): Ref {
  const now = ctx.now().toISOString();
  return {
    schema: 2,
    lineage,
    epoch: 1,
    head_txid: ref.head_txid,
    head_epoch: 1,
    checkpoints: { fork: { txid: ref.head_txid, epoch: 1, created_at: now } },
    parent: `${db}@${branch}@${ref.head_txid}`,
    ttl: SAFETY_FORK_TTL,
    touched_at: now,
    meta: { [KIND_KEY]: kind, [OF_KEY]: branch },
  };
}

/** The log fields of r, to carry into a ref that replaces it. */
function logOf(r: Ref): Pick<Ref, 'log_id' | 'log'> {
  return { ...(r.log_id !== undefined ? { log_id: r.log_id } : {}), ...(r.log !== undefined ? { log: r.log } : {}) };
}

/** An undo point written but not yet relied on: the operation that kept it can still put the old one back. */
export interface KeptUndoPoint {
  name: string;
  /** Where the earlier undo point of that name was kept, when it held the only copy of its state. */
  earlier?: string;
  /** Puts back what the name held before (or removes the new undo point), when the operation then failed. */
  restore(): Promise<void>;
  /** Refreshes the checkout of a replaced undo point, once the operation went through. */
  settle(): Promise<void>;
}

/**
 * Keeps a branch's current head as `<branch>-<kind>` (pre-rollback / pre-promote): a shared fork with a TTL of at
 * least 24h, replacing the previous one of the same name only while that is an untouched undo point of this branch
 * nobody has claimed, and never losing it: when no other branch holds its state, it is kept first as
 * `<branch>-<kind>-<n>` (keepEarlierUndoPoint). Callers run checkUndoSlot first, before they write anything, and
 * call this as the last step before they move the branch: if the move fails, restore() puts the previous undo point
 * back (and drops the copy kept aside), so a failed operation keeps it; the check is repeated here against the ref
 * the compare-and-swap replaces.
 */
export async function keepSafetyFork(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  kind: 'pre-rollback' | 'pre-promote',
  resolver: ChainResolver,
): Promise<KeptUndoPoint> {
  const name = undoPointName(branch, kind);
  const fresh = await newLineageAt(ctx, db, resolver, ref.lineage, ref.head_txid);
  const safety = undoPointRef(ctx, db, branch, ref, kind, fresh.lineage);
  if (fresh.base) safety.base = fresh.base;
  for (let i = 0; ; i++) {
    const old = await ctx.store.tryGetRef(db, name);
    if (old) await refuseReplacing(ctx, db, branch, kind, name, old.ref);
    const aside = old ? await keepEarlierUndoPoint(ctx, db, branch, kind, name, old, ref, resolver) : undefined;
    let etag: string;
    try {
      // A replaced undo point goes on with its log (the name is the same undo point, kept anew); a new one starts one.
      const from = { from: `${db}@${branch}@${ref.head_txid}` };
      etag = old
        ? await ctx.store.casRef(
            db,
            name,
            old.etag,
            await logged(
              ctx,
              db,
              name,
              'fork',
              old.ref,
              { ...safety, ...logOf(old.ref), generation: old.ref.generation ?? 0 },
              from,
            ),
          )
        : await ctx.store.createRef(db, name, await logged(ctx, db, name, 'fork', undefined, safety, from));
    } catch (err) {
      // The earlier undo point is still in place (or another took the name): the copy kept aside goes.
      await aside?.drop();
      if (i >= 3 || !(hasCode(err, 'CAS_CONFLICT') || hasCode(err, 'ALREADY_EXISTS'))) throw err;
      continue;
    }
    return {
      name,
      ...(aside ? { earlier: aside.name } : {}),
      restore: async () => {
        if (old) await ctx.store.casRef(db, name, etag, { ...old.ref, generation: (old.ref.generation ?? 0) + 1 });
        else await ctx.store.deleteRef(db, name, etag);
        await aside?.drop();
      },
      settle: async () => {
        if (!old) return;
        const r = await refreshCheckout(ctx, db, name, safety);
        if (r.error) ctx.warn(r.error.message);
      },
    };
  }
}
