import { asOffshootError, fail, type OffshootError } from '../core/errors.js';
import { formatDuration, type TtlArg } from '../core/duration.js';
import { inBatches } from '../core/in-batches.js';
import { validateMeta, type Meta } from '../core/meta.js';
import { validateName } from '../core/names.js';
import type { Ref } from '../core/ref.js';
import type { Target } from '../core/target.js';
import { ChainResolver } from '../store/chain-resolver.js';
import type { VersionedRef } from '../store/store.js';
import { readBranch } from './helpers/branch/branch-ref.js';
import { expiryOf, expiryText } from './helpers/branch/expiry.js';
import { UNREAD_LIVENESS } from './helpers/branch/lease-liveness.js';
import { resolvePoint } from './helpers/history/point.js';
import { checkpointIfDirty } from './helpers/checkout/checkpoint-if-dirty.js';
import type { OpsContext } from './helpers/context/context.js';
import { refuseReservedName } from './helpers/branch/undo-point-names.js';
import { clearTornFork, isTornFork } from './helpers/branch/torn-fork.js';
import { type Actor, HUMAN, vetWrite } from './helpers/safety/policy.js';
import { checkForkPointLive } from './helpers/chain/fork-point-check.js';
import { planLineageAt, newLineagesAt, type NewLineage } from './helpers/chain/new-lineage.js';
import { logged } from './helpers/history/record.js';
import { ephemeralHostFor } from './helpers/ephemeral/ephemeral-fork.js';

// The ephemeral forks a daemon holds in its store's overlay until kept, which a fork with `ephemeral` makes (loaded
// with fork, not with the ops context: its lineage ids need node:crypto, which a listing never loads).
export { EphemeralForks } from './helpers/ephemeral/ephemeral-forks.js';

/** Options of fork: a checkpoint or moment to fork at (else the head), a TTL, meta tags, and who asks. */
export interface ForkOptions {
  /** A checkpoint name, or a moment: `tx:42`, `at:2026-12-07T10:00:00Z`. */
  at?: string;
  ttl?: TtlArg;
  meta?: Meta;
  /** Who asks: the checkpoint of a dirty source checkout is a write into the source, decided by the safety policy. */
  actor?: Actor;
  /**
   * Held by the daemon serving the context until kept, never written to the store (docs/concepts.md, Ephemeral
   * forks); refused outside a daemon. A durable fork of an ephemeral source keeps the source first.
   */
  ephemeral?: boolean;
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
  /** The fork is ephemeral: held by the daemon that made it, gone with it unless kept. */
  ephemeral?: true;
}

/** What a batch fork made: every new branch at one fork point. */
export interface ForkManyResult extends Omit<ForkResult, 'branch'> {
  branches: string[];
}

/**
 * Snapshots copied (at the floor) or refs withdrawn at once by a batch: enough to overlap the store's writes without
 * flooding its thread pool.
 */
const BATCH_CONCURRENCY = 32;

/**
 * Deletes the refs a failed fork created and returns the error to throw: the fork's own when they are gone, else one
 * with the same code that names the branches left behind and how to remove them.
 */
async function withdraw(
  ctx: OpsContext,
  db: string,
  branches: readonly string[],
  cause: unknown,
): Promise<OffshootError> {
  const e = asOffshootError(cause);
  const left: string[] = [];
  let why = '';
  await inBatches(branches, BATCH_CONCURRENCY, async (branch) => {
    try {
      const mine = await ctx.store.tryGetRef(db, branch);
      if (mine) await ctx.store.deleteRef(db, branch, mine.etag);
    } catch (err) {
      left.push(branch);
      why = (err as Error).message;
    }
  });
  if (left.length === 0) return e;
  const names = left.sort().map((b) => `${db}@${b}`);
  const shown = names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
  return fail(
    e.code,
    `${e.message}; the new ${left.length === 1 ? 'branch' : 'branches'} ${shown} ${left.length === 1 ? 'was' : 'were'} left in the store (withdrawing failed: ${why})`,
    {
      hint: `remove ${left.length === 1 ? 'it' : 'them'} with 'offshoot destroy ${names[0]}'${left.length === 1 ? '' : ' (each)'}, then retry the fork`,
      retryable: e.retryable,
      cause,
    },
  );
}

/** Checks the options every fork shares; returns the validated meta. */
function checkOptions(opts: ForkOptions): Meta | undefined {
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
  return meta;
}

/**
 * The resolver a fork plans with: by key alone, since a fork needs only which objects the chain holds, and listing
 * sizes would cost one stat per object the source's lineage ever wrote (a long-lived branch's whole history).
 */
function forkResolver(ctx: OpsContext): ChainResolver {
  return new ChainResolver(ctx.store, { sizes: false });
}

/**
 * The source's state to fork: a checkpoint's txid, else the head after checkpointing a dirty checkout. `read` is the
 * source's ref as the caller read it (alongside its own checks), so a clean fork reads the source once.
 */
async function forkPoint(
  ctx: OpsContext,
  src: Target,
  opts: ForkOptions,
  read: Promise<VersionedRef>,
): Promise<{ ref: Ref; lineage: string; txid: number }> {
  let { ref } = await read;
  if (opts.at !== undefined) {
    const p = await resolvePoint(ctx, src, ref, opts.at);
    return { ref, lineage: p.lineage, txid: p.txid };
  }
  const vet = vetWrite(ctx, src, opts.actor ?? HUMAN, 'implicit', `offshoot fork ${src.db}@${src.branch} <new>`);
  if (await checkpointIfDirty(ctx, src, ref, vet)) ref = (await readBranch(ctx, src.db, src.branch)).ref;
  return { ref, lineage: ref.lineage, txid: ref.head_txid };
}

/** The ref of a new fork at txid in the fresh lineage. */
function childRef(
  src: Target,
  txid: number,
  fresh: NewLineage,
  opts: ForkOptions,
  meta: Meta | undefined,
  now: Date,
): Ref {
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
  return child;
}

/** The child's ref with the first record of its log: a fork of its parent, at a checkpoint when one was named. */
function forkRecorded(ctx: OpsContext, src: Target, branch: string, child: Ref, opts: ForkOptions): Promise<Ref> {
  return logged(ctx, src.db, branch, 'fork', undefined, child, {
    from: child.parent ?? `${src.db}@${src.branch}`,
    ...(opts.at !== undefined ? { name: opts.at } : {}),
  });
}

/** When a new fork may be reaped, by the one expiry rule (it holds no lease yet). */
function forkExpiry(child: Ref): string | undefined {
  return expiryText(expiryOf(child, UNREAD_LIVENESS));
}

/**
 * `offshoot fork db[@src] <new>`: a copy-on-write child that shares the parent's durable objects through a
 * create-only base pointer — two small writes (base.json and the child ref, one group commit that makes the base
 * pointer visible before the ref and both durable before it answers) whatever the database size; a torn fork left
 * under the name by a crash is replaced. A dirty
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
  const meta = checkOptions(opts);
  const host = ephemeralHostFor(ctx, opts.ephemeral);
  // A durable child cannot stand on what only this daemon holds.
  if (host === undefined) await ctx.ephemeral?.keep(src);
  // The source is read while the new name is checked; a taken name still wins over a missing source.
  const source = readBranch(ctx, src.db, src.branch);
  source.catch(() => undefined);
  const existing = await ctx.store.tryGetRef(src.db, newBranch);
  if (existing && !(await clearTornFork(ctx, src.db, newBranch, existing))) {
    throw fail('ALREADY_EXISTS', `branch ${src.db}@${newBranch} already exists`, {
      hint: 'pick another name, or destroy the existing branch first',
    });
  }
  const { lineage, txid } = await forkPoint(ctx, src, opts, source);
  const held: string[] = [];
  const newId =
    host &&
    ((): string => {
      const id = host.newLineage();
      held.push(id);
      return id;
    });
  let fresh: NewLineage;
  try {
    fresh = await planLineageAt(ctx, src.db, forkResolver(ctx), lineage, txid, newId ? { newId } : {});
  } catch (err) {
    host?.release(src.db, newBranch, held);
    throw err;
  }
  const now = ctx.now();
  const child = await forkRecorded(ctx, src, newBranch, childRef(src, txid, fresh, opts, meta, now), opts);
  host?.hold(src.db, newBranch);
  const made = await ctx.store.createForkRefs(src.db, [{ branch: newBranch, ref: child }]);
  if (made.failed !== undefined) {
    host?.release(src.db, newBranch, held);
    throw made.failed.error;
  }
  try {
    // An ephemeral fork's pin is what GC sees instead of a ref: it lands before the check, as the ref does.
    await host?.pinned();
    await checkForkPointLive(ctx, fresh.dependsOn);
  } catch (err) {
    // Whether GC condemned the fork point (BUSY) or the store failed before the check could vouch for it, the new
    // ref is withdrawn so a retry starts clean; if the withdrawal fails too, the error says the branch is still there.
    throw await withdraw(ctx, src.db, [newBranch], err);
  }
  return {
    db: src.db,
    source: src.branch,
    branch: newBranch,
    txid,
    mode: fresh.mode,
    path: fresh.path,
    ttl: child.ttl,
    expiresAt: forkExpiry(child),
    ...(host !== undefined ? { ephemeral: true as const } : {}),
  };
}

/**
 * `offshoot fork db[@src] <new> <new>…`: many forks of one fork point, all or nothing. Every name is checked (valid,
 * distinct, not yet a branch) before anything is written; the source is read and its chain resolved once, then each
 * fork writes only its own two small objects (base.json and its ref) in one group commit for the whole batch (every
 * base pointer visible before any ref, each directory synced once, after all are linked), and the fork point is checked against GC once
 * for all. If any write fails, the forks already made are withdrawn and the error names the branch
 * that failed (and any withdrawal that failed too, so nothing is left behind unreported).
 */
export async function forkMany(
  ctx: OpsContext,
  src: Target,
  names: readonly string[],
  opts: ForkOptions = {},
): Promise<ForkManyResult> {
  if (names.length === 0)
    throw fail('INVALID_ARGUMENT', 'fork: no new branch names', { hint: 'name at least one new branch' });
  const seen = new Set<string>();
  for (const n of names) {
    validateName('branch', n);
    refuseReservedName(src.db, n);
    if (seen.has(n))
      throw fail('INVALID_ARGUMENT', `fork: the new branch name ${n} is given twice`, {
        hint: 'give each new branch a distinct name',
      });
    seen.add(n);
  }
  const meta = checkOptions(opts);
  const host = ephemeralHostFor(ctx, opts.ephemeral);
  if (host === undefined) await ctx.ephemeral?.keep(src);
  const existing = new Set(await ctx.store.listBranches(src.db));
  const torn: Array<{ name: string; got: VersionedRef }> = [];
  const taken: string[] = [];
  // A torn fork under a name (what a crash left of an earlier fork) is replaced, once no name is really taken.
  await inBatches(
    names.filter((n) => existing.has(n)),
    BATCH_CONCURRENCY,
    async (name) => {
      const got = await ctx.store.tryGetRef(src.db, name);
      if (got && (await isTornFork(ctx, got.ref))) torn.push({ name, got });
      else if (got) taken.push(name);
    },
  );
  taken.sort((a, b) => names.indexOf(a) - names.indexOf(b));
  if (taken.length > 0) {
    throw fail(
      'ALREADY_EXISTS',
      `branch ${src.db}@${taken[0]} already exists${taken.length > 1 ? ` (and ${taken.length - 1} more of the names)` : ''}`,
      { hint: 'pick other names, or destroy the existing branches first; nothing was forked' },
    );
  }
  await inBatches(torn, BATCH_CONCURRENCY, ({ name, got }) => ctx.store.deleteRef(src.db, name, got.etag));
  const { lineage, txid } = await forkPoint(ctx, src, opts, readBranch(ctx, src.db, src.branch));
  const held: string[] = [];
  const newId =
    host &&
    ((): string => {
      const id = host.newLineage();
      held.push(id);
      return id;
    });
  const fresh = await newLineagesAt(ctx, src.db, forkResolver(ctx), lineage, txid, newId ? { newId } : {});
  const now = ctx.now();
  const created: string[] = [];
  const forks: Array<{ branch: string; ref: Ref }> = [];
  try {
    await inBatches(names, BATCH_CONCURRENCY, async (name, i) => {
      const child = childRef(src, txid, await fresh.next(i), opts, meta, now);
      forks[i] = { branch: name, ref: await forkRecorded(ctx, src, name, child, opts) };
    });
    for (const name of names) host?.hold(src.db, name);
    const made = await ctx.store.createForkRefs(src.db, forks);
    created.push(...made.created);
    if (made.failed !== undefined) {
      const e = asOffshootError(made.failed.error);
      throw fail(e.code, `fork of ${src.db}@${made.failed.branch}: ${e.message}`, {
        ...(e.hint !== undefined ? { hint: e.hint } : {}),
        retryable: e.retryable,
        cause: made.failed.error,
      });
    }
    await host?.pinned();
    await checkForkPointLive(ctx, fresh.dependsOn);
  } catch (err) {
    const e = await withdraw(ctx, src.db, created, err);
    for (const name of names) host?.release(src.db, name, held);
    throw e;
  }
  // Every fork of the batch has the same TTL and activity time, so the first one's expiry is each one's.
  const first = (forks[0] as { ref: Ref }).ref;
  return {
    db: src.db,
    source: src.branch,
    branches: [...names],
    txid,
    mode: fresh.mode,
    path: fresh.path,
    ttl: first.ttl,
    expiresAt: forkExpiry(first),
    ...(host !== undefined ? { ephemeral: true as const } : {}),
  };
}
