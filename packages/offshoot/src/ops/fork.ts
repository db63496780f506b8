import { asOffshootError, fail, type OffshootError } from '../core/errors.js';
import { formatDuration, type TtlArg } from '../core/duration.js';
import { validateMeta, type Meta } from '../core/meta.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { readBranch } from './helpers/branch/branch-ref.js';
import { checkpointTxid } from './helpers/branch/checkpoint-txid.js';
import { checkpointIfDirty } from './helpers/checkout/checkpoint-if-dirty.js';
import type { OpsContext } from './helpers/context/context.js';
import { refuseReservedName } from './helpers/branch/undo-point-names.js';
import { checkForkPointLive } from './helpers/chain/fork-point-check.js';
import { newLineageAt } from './helpers/chain/new-lineage.js';

/** Options of fork: a checkpoint to fork at (else the head), a TTL, meta tags. */
export interface ForkOptions {
  at?: string;
  ttl?: TtlArg;
  meta?: Meta;
}

/** What fork made. */
export interface ForkResult {
  db: string;
  source: string;
  branch: string;
  txid: number;
  mode: 'shared' | 'materialized';
  path: 'fast' | 'slow' | undefined;
  ttl: string | undefined;
  expiresAt: string | undefined;
}

/**
 * Deletes the ref a failed fork created and returns the error to throw: the fork's own when the ref is gone, else
 * one with the same code that names the branch left behind and how to remove it.
 */
async function withdraw(ctx: OpsContext, db: string, branch: string, cause: unknown): Promise<OffshootError> {
  const e = asOffshootError(cause);
  try {
    const mine = await ctx.store.tryGetRef(db, branch);
    if (mine) await ctx.store.deleteRef(db, branch, mine.etag);
    return e;
  } catch (err) {
    return fail(
      e.code,
      `${e.message}; the new branch ${db}@${branch} was left in the store (withdrawing it failed: ${(err as Error).message})`,
      {
        hint: `remove it with 'offshoot destroy ${db}@${branch}', then retry the fork`,
        retryable: e.retryable,
        cause,
      },
    );
  }
}

/**
 * `offshoot fork db[@src] <new>`: a copy-on-write child that shares the parent's durable objects through a
 * create-only base pointer — two small writes (base.json and the child ref) whatever the database size. A dirty
 * source checkout is checkpointed first (changed pages only) so the child holds everything committed before the
 * call; a chain already at the depth floor is materialized instead of shared. A fork that fails after writing its ref
 * withdraws it; a withdrawal that fails too is reported in the error, never swallowed.
 */
export async function fork(
  ctx: OpsContext,
  src: Target,
  newBranch: string,
  opts: ForkOptions = {},
): Promise<ForkResult> {
  validateName('branch', newBranch);
  refuseReservedName(src.db, newBranch);
  const meta = validateMeta(opts.meta);
  // A zero or negative TTL would make the fork reapable the moment it exists; callers other than the CLI build TtlArgs too.
  if (opts.ttl?.kind === 'none' || (opts.ttl?.kind === 'set' && opts.ttl.ttl <= 0n)) {
    throw fail('INVALID_ARGUMENT', 'a fork TTL must be positive', {
      hint: 'pass a positive --ttl such as 1h, or omit it for a fork that never expires',
      hints: {
        agent: 'pass a positive ttl such as "1h", or "none" for a fork that never expires',
        sdk: 'pass a positive ttl such as 1h, or none for a fork that never expires',
      },
    });
  }
  if (await ctx.store.tryGetRef(src.db, newBranch)) {
    throw fail('ALREADY_EXISTS', `branch ${src.db}@${newBranch} already exists`, {
      hint: 'pick another name, or destroy the existing branch first',
    });
  }
  let { ref } = await readBranch(ctx, src.db, src.branch);
  let txid: number;
  if (opts.at !== undefined) {
    txid = checkpointTxid(ref, src, opts.at);
  } else {
    if (await checkpointIfDirty(ctx, src, ref)) ref = (await readBranch(ctx, src.db, src.branch)).ref;
    txid = ref.head_txid;
  }
  const resolver = new ChainResolver(ctx.store);
  const fresh = await newLineageAt(ctx, src.db, resolver, ref.lineage, txid);
  const now = ctx.now();
  const child: Ref = {
    schema: 2,
    lineage: fresh.lineage,
    epoch: 1,
    head_txid: txid,
    head_epoch: 1,
    checkpoints: { fork: { txid, epoch: 1, created_at: now.toISOString() } },
    parent: `${src.db}@${src.branch}@${txid}`,
    touched_at: now.toISOString(),
  };
  if (fresh.base) child.base = fresh.base;
  if (opts.ttl?.kind === 'set') child.ttl = formatDuration(opts.ttl.ttl);
  if (meta) child.meta = meta;
  await ctx.store.createRef(src.db, newBranch, child);
  try {
    await checkForkPointLive(ctx, fresh.dependsOn);
  } catch (err) {
    // Whether GC condemned the fork point (BUSY) or the store failed before the check could vouch for it, the new
    // ref is withdrawn so a retry starts clean; if the withdrawal fails too, the error says the branch is still there.
    throw await withdraw(ctx, src.db, newBranch, err);
  }
  const expiresAt =
    opts.ttl?.kind === 'set' ? new Date(now.getTime() + Number(opts.ttl.ttl / 1_000_000n)).toISOString() : undefined;
  return {
    db: src.db,
    source: src.branch,
    branch: newBranch,
    txid,
    mode: fresh.mode,
    path: fresh.path,
    ttl: child.ttl,
    expiresAt,
  };
}
