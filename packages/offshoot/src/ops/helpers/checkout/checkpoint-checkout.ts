import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { fail } from '../../../core/errors.js';
import { validateMeta, type Meta } from '../../../core/meta.js';
import { named, nameMap } from '../../../core/name-map.js';
import type { Ref } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import { backdateAndFingerprint, readSidecar, sameIdentity, writeSidecar } from '../../../sqlite/checkout-sidecar.js';
import { loadPageHasher } from '../../../sqlite/page-hash.js';
import { diffPageSums, geometryOf, scanPageSums } from '../../../sqlite/page-scan.js';
import { readPageSums, trustedPageSums, writePageSums, type PageSums } from '../../../sqlite/page-sums.js';
import { FrozenCheckout } from '../../../sqlite/quiesce.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import type { VersionedRef } from '../../../store/store.js';
import { headIdentity, readBranch, refuseForeignLease } from '../branch/branch-ref.js';
import { headKind, roomForHead, writeHead } from '../chain/chain-writer.js';
import type { OpsContext } from '../context/context.js';
import { encodePages, type EncodePlan } from '../chain/encode-pages.js';
import { checkoutPath } from '../context/paths.js';
import { withTempDir } from '../context/temp-dir.js';
import { undoPointName } from '../branch/undo-point-names.js';
import type { LogOp } from '../../../core/history.js';
import { logged, type RecordDetail } from '../history/record.js';

/** How a verb records the checkpoint it lands its change as: its meta of offshoot's own, its log op and details. */
export interface CheckpointAs {
  own: Meta;
  op: LogOp;
  detail: RecordDetail;
}

/** What a checkpoint wrote: a segment of changed pages, a full snapshot, or nothing (the checkout was unchanged). */
export interface CheckpointResult {
  name: string | undefined;
  txid: number;
  kind: 'segment' | 'snapshot' | 'none';
  pages: number;
  bytes: number;
  /**
   * The merged segment written inline before the head, if any: only when background merges fell behind and the
   * chain was at its hard bound. Otherwise merges run after the checkpoint (compactBranch).
   */
  merged?: { key: string; replaced: number; pages: number; bytes: number };
}

/**
 * Records a branch's checkout as its new head, the caller holding the branch lease: writes only the pages that
 * changed since the checkout was materialized or last checkpointed, as a segment at head+1 — a snapshot on the
 * cadence or when most pages changed — and records the name (if any) by compare-and-swap. An unchanged checkout
 * writes no object; the name lands on the current head. `vet` (the caller's rules) sees the ref read under the lease.
 * `as` is how a verb that lands its change as a checkpoint (a merge) records it: meta of offshoot's own on the
 * checkpoint (`offshoot.*` keys, which no caller may set), added unchecked, and its own log record.
 */
export async function checkpointCheckout(
  ctx: OpsContext,
  t: Target,
  name: string | undefined,
  given?: Meta,
  vet?: (ref: Ref) => Promise<void>,
  as?: CheckpointAs,
): Promise<CheckpointResult> {
  validateMeta(given);
  const meta = as === undefined ? given : { ...given, ...as.own };
  const cur = await readBranch(ctx, t.db, t.branch);
  await vet?.(cur.ref);
  if (name !== undefined && named(cur.ref.checkpoints, name)) {
    throw fail('ALREADY_EXISTS', `checkpoint "${name}" already exists on ${t.db}@${t.branch}`, {
      hint: 'pick another checkpoint name',
    });
  }
  await refuseForeignLease(ctx, t.db, t.branch, cur.ref, 'checkpoint');
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (!existsSync(path)) {
    throw fail('NOT_FOUND', `no checkout of ${t.db}@${t.branch} at ${path}`, {
      hint: `run 'offshoot checkout ${t.db}@${t.branch}' and write to it first`,
    });
  }
  const frozen = FrozenCheckout.open(path);
  try {
    return await checkpointFrozen(ctx, t, name, meta, cur, frozen, as);
  } finally {
    frozen.release();
  }
}

async function checkpointFrozen(
  ctx: OpsContext,
  t: Target,
  name: string | undefined,
  meta: Meta | undefined,
  cur: VersionedRef,
  frozen: FrozenCheckout,
  as: CheckpointAs | undefined,
): Promise<CheckpointResult> {
  const { ref } = cur;
  if (frozen.stat.size === 0n)
    throw fail(
      'CORRUPT',
      `cannot checkpoint ${t.db}@${t.branch}: its checkout ${frozen.path} is empty (0 bytes): a truncated or unfinished copy?`,
      { hint: `restore the file, or check the branch out again to get its head back (its head is unchanged)` },
    );
  const sc = readSidecar(frozen.path);
  if (sc !== undefined && sc.lineage !== ref.lineage) {
    // The file was materialized from another lineage: the branch was repointed (a rollback or promote whose refresh
    // found it busy) or destroyed and recreated. Recording it would silently overwrite the branch with that content.
    throw fail(
      'CAS_CONFLICT',
      `the checkout of ${t.db}@${t.branch} holds another lineage than the branch (it was repointed or recreated since ${frozen.path} was materialized)`,
      {
        hint: `run 'offshoot checkout ${t.db}@${t.branch}' to refresh it (its local changes are kept as ${undoPointName(t.branch, 'pre-reopen')}), or copy the file and import it with 'offshoot create <db> --from'`,
        hints: {
          agent: `call offshoot_checkout on ${t.db}@${t.branch} to refresh it; its local changes are kept as the branch ${undoPointName(t.branch, 'pre-reopen')}`,
          sdk: `check ${t.db}@${t.branch} out again to refresh it; its local changes are kept as the branch ${undoPointName(t.branch, 'pre-reopen')}`,
        },
      },
    );
  }
  const g = geometryOf(frozen, Number(frozen.stat.size), frozen.path);
  const onHead = sameIdentity(sc, headIdentity(ref)) && sc?.ltx_checksum !== undefined;
  // Sums that disagree with the recorded head checksum cannot seed a segment; fall back to a snapshot.
  const oldSums = onHead ? trustedPageSums(await readPageSums(frozen.path), sc) : undefined;
  const unchangedStat =
    onHead &&
    sc?.mtime_ns === frozen.stat.mtimeNs.toString() &&
    sc.size === Number(frozen.stat.size) &&
    sc.ino === frozen.stat.ino.toString();

  let sums: PageSums;
  let plan: EncodePlan | undefined;
  const txid = ref.head_txid + 1;
  if (unchangedStat && oldSums) {
    sums = oldSums;
  } else if (oldSums && oldSums.pageSize === g.pageSize && sc?.ltx_checksum) {
    const d = diffPageSums(frozen, g, oldSums, await loadPageHasher());
    sums = d.sums;
    if (d.changed.length > 0 || g.pageCount !== oldSums.pageCount) {
      plan =
        headKind(d.changed.length, g.pageCount, false) === 'snapshot'
          ? { kind: 'snapshot', txid }
          : { kind: 'segment', txid, pages: d.changed, preApplyChecksum: BigInt('0x' + sc.ltx_checksum) };
    }
  } else {
    sums = scanPageSums(frozen, g, await loadPageHasher());
    plan = { kind: 'snapshot', txid };
  }

  const checksum = sums.rollingChecksum();
  const now = ctx.now();
  let result: CheckpointResult;
  let after: VersionedRef;
  if (plan === undefined) {
    after = await recordCheckpoint(ctx, t, cur, name, meta, ref.head_txid, undefined, {}, as);
    result = { name, txid: ref.head_txid, kind: 'none', pages: 0, bytes: 0 };
  } else {
    const p = plan;
    const room = p.kind === 'segment' ? await makeRoom(ctx, t, ref) : undefined;
    const uploaded = await withTempDir(ctx, async (dir) => {
      const out = join(dir, 'checkpoint.ltx');
      const bytes = await encodePages(frozen, g, p, checksum, out, now.getTime());
      const written = { pages: p.kind === 'segment' ? p.pages.length : g.pageCount, bytes };
      const head = await writeHead(ctx, t.db, t.branch, cur, { kind: p.kind, txid, file: out }, (up) =>
        recordCheckpoint(ctx, t, up, name, meta, txid, up.ref.epoch, written, as),
      );
      return { ...head, bytes };
    });
    after = uploaded.current;
    result = {
      name,
      txid,
      kind: p.kind,
      pages: p.kind === 'segment' ? p.pages.length : g.pageCount,
      bytes: uploaded.bytes,
      ...(room ? { merged: room } : {}),
    };
  }
  // Still frozen: nobody can have written the main file since it was read, so these sidecars describe it exactly.
  const fp = backdateAndFingerprint(frozen.path, now.getTime());
  const version = await writePageSums(frozen.path, sums);
  await writeSidecar(frozen.path, {
    ...headIdentity(after.ref),
    ltx_checksum: checksum.toString(16),
    pages_version: version,
    page_size: g.pageSize,
    commit: g.pageCount,
    ...fp,
  });
  return result;
}

/**
 * The hard bound before a segment lands on `ref`'s chain: merges inline only when the chain is already at it. A
 * failed merge costs a longer chain, never the checkpoint, so it is reported and the segment is written anyway.
 */
async function makeRoom(ctx: OpsContext, t: Target, ref: Ref): Promise<CheckpointResult['merged']> {
  try {
    const chain = await new ChainResolver(ctx.store).resolve(ref.lineage, ref.head_txid);
    const c = await roomForHead(ctx, t.db, ref.lineage, ref.head_txid, ref.epoch, chain.members);
    if (!c.merged) return undefined;
    const { object, replaced, pages, bytes } = c.merged;
    return { key: object.key, replaced, pages, bytes };
  } catch (err) {
    ctx.warn(`${t.db}@${t.branch}: chain not compacted (the next checkpoint retries): ${(err as Error).message}`);
    return undefined;
  }
}

async function recordCheckpoint(
  ctx: OpsContext,
  t: Target,
  cur: VersionedRef,
  name: string | undefined,
  meta: Meta | undefined,
  txid: number,
  epoch: number | undefined,
  written: { pages?: number; bytes?: number },
  as: CheckpointAs | undefined,
): Promise<VersionedRef> {
  const now = ctx.now().toISOString();
  let next: Ref = { ...cur.ref, checkpoints: nameMap(cur.ref.checkpoints), touched_at: now };
  if (epoch !== undefined) {
    next.head_txid = txid;
    next.head_epoch = epoch;
  }
  if (name !== undefined)
    next.checkpoints[name] = { txid, epoch: next.head_epoch, created_at: now, ...(meta ? { meta } : {}) };
  // A named checkpoint is a checkpoint; an unnamed one (a dirty checkout's, before a fork or a rollback) a flush, and
  // one that found nothing to write changed no state.
  if (name !== undefined || epoch !== undefined)
    next = await logged(ctx, t.db, t.branch, as?.op ?? (name === undefined ? 'flush' : 'checkpoint'), cur.ref, next, {
      ...(name !== undefined ? { name } : {}),
      ...written,
      ...as?.detail,
    });
  const etag = await ctx.store.casRef(t.db, t.branch, cur.etag, next);
  return { ref: { ...next, generation: (next.generation ?? 0) + 1 }, etag };
}
