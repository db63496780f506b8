import { existsSync } from 'node:fs';
import { logged } from '../history/record.js';
import { join } from 'node:path';
import { hasCode } from '../../../core/errors.js';
import { snapshotKey } from '../../../core/keys.js';
import { newLineageId } from '../../../core/lineage.js';
import type { Ref } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import { checkClean, readSidecar, sameIdentity } from '../../../sqlite/checkout-sidecar.js';
import { FileSource, geometryOf, type PageSource, scanPageSums } from '../../../sqlite/page-scan.js';
import { samePage1ApartFromBookkeeping } from '../../../sqlite/header-bookkeeping.js';
import { foldPage, pageChecksum } from '../../../ltx/checksum.js';
import { FrozenCheckout } from '../../../sqlite/quiesce.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import { headIdentity } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { encodeSnapshotPages } from '../chain/encode-pages.js';
import { cachedChain } from '../chain/materialize.js';
import { checkoutPath } from '../context/paths.js';
import { undoPointRef } from './safety-fork.js';
import { MAX_UNDO_N, undoPointName } from '../branch/undo-point-names.js';
import { withTempDir } from '../context/temp-dir.js';

/** The undo branch that kept a checkout's content, and the txid it holds it at. */
export interface KeptCheckout {
  branch: string;
  txid: number;
}

/** The checkpoint name on a kept checkout's undo branch. */
const KEPT_CHECKPOINT = 'unflushed';

/**
 * True when a checkout holds the head's database and differs only in page 1's header bookkeeping (what a journal-mode
 * switch rewrites): its pages past the first sum to the head's, and its first page is the head's but for those bytes.
 */
function sameApartFromBookkeeping(
  co: PageSource,
  headPath: string,
  pageSize: number,
  checksum: bigint,
  headChecksum: bigint,
): boolean {
  const mine = Buffer.alloc(pageSize);
  const theirs = Buffer.alloc(pageSize);
  const head = new FileSource(headPath);
  try {
    if (co.read(mine, 0, pageSize) < pageSize || head.read(theirs, 0, pageSize) < pageSize) return false;
  } finally {
    head.close();
  }
  if (foldPage(foldPage(checksum, pageChecksum(1, mine)), pageChecksum(1, theirs)) !== headChecksum) return false;
  return samePage1ApartFromBookkeeping(mine, theirs);
}

/**
 * Before a checkout is replaced by the branch head (a session reopening a checkout whose daemon was killed with
 * writes captured but not flushed, a checkout whose branch moved under it), keeps the checkout's content if it differs from the head: a snapshot of it on a
 * fresh lineage, as a new undo branch `<branch>-pre-reopen[-N]` (24 h TTL, checkpoint `unflushed`) whose parent
 * is the branch head. A checkout proven clean costs O(1); any other is read once and compared with the head, so
 * a checkout that merely lost its stamp, or whose header bookkeeping alone changed (a journal-mode switch), keeps
 * nothing. Returns the undo branch, or undefined when nothing differed.
 */
export async function keepDivergedCheckout(ctx: OpsContext, t: Target, ref: Ref): Promise<KeptCheckout | undefined> {
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (!existsSync(path)) return undefined;
  const sc = readSidecar(path);
  if (sameIdentity(sc, headIdentity(ref)) && (await checkClean(path, sc)) === 'clean') return undefined;
  const frozen = FrozenCheckout.open(path);
  try {
    const g = geometryOf(frozen, Number(frozen.stat.size), path);
    const sums = scanPageSums(frozen, g);
    const chain = await new ChainResolver(ctx.store).resolve(ref.lineage, ref.head_txid);
    const entry = await cachedChain(ctx, t.db, chain);
    const head = entry.result;
    const checksum = sums.rollingChecksum();
    if (
      g.pageCount === head.commit &&
      g.pageSize === head.pageSize &&
      (checksum === head.checksum || sameApartFromBookkeeping(frozen, entry.path, g.pageSize, checksum, head.checksum))
    )
      return undefined;
    // An ephemeral branch's undo point is ephemeral too: held by the daemon, as everything of the branch is.
    const lineage = ctx.ephemeral?.holds(t.db, t.branch) ? ctx.ephemeral.newLineage() : newLineageId();
    const txid = ref.head_txid + 1;
    await withTempDir(ctx, async (dir) => {
      const out = join(dir, 'kept.ltx');
      await encodeSnapshotPages(frozen, g, txid, checksum, out, ctx.now().getTime());
      await ctx.store.putData(snapshotKey(lineage, 1, txid), { file: out });
    });
    const kept = undoPointRef(ctx, t.db, t.branch, ref, 'pre-reopen', lineage);
    kept.head_txid = txid;
    kept.checkpoints = { [KEPT_CHECKPOINT]: { txid, epoch: 1, created_at: ctx.now().toISOString() } };
    for (let n = 1; ; n++) {
      // `<branch>-pre-reopen`, then `-2`, `-3`…: an earlier one holds other writes and is never replaced.
      const name = undoPointName(t.branch, 'pre-reopen', n);
      try {
        const from = `${t.db}@${t.branch}@${ref.head_txid}`;
        await ctx.store.createRef(t.db, name, await logged(ctx, t.db, name, 'fork', undefined, kept, { from }));
        return { branch: name, txid };
      } catch (err) {
        if (!hasCode(err, 'ALREADY_EXISTS') || n >= MAX_UNDO_N) throw err;
      }
    }
  } finally {
    frozen.release();
  }
}

/**
 * Before a repoint refreshes a checkout: keeps its content as keepDivergedCheckout does, but only when it was written
 * since it was materialized or checkpointed (an unmodified one, however stale, holds a state the store has), and
 * says so. O(1) for an unmodified checkout.
 */
export async function keepModifiedCheckout(ctx: OpsContext, t: Target, ref: Ref): Promise<KeptCheckout | undefined> {
  const path = checkoutPath(ctx.checkoutRoot, t.db, t.branch);
  if (!existsSync(path) || (await checkClean(path, readSidecar(path))) === 'clean') return undefined;
  const kept = await keepDivergedCheckout(ctx, t, ref);
  if (kept !== undefined)
    ctx.warn(
      `the checkout of ${t.db}@${t.branch} held writes no checkpoint recorded; they are kept as ${t.db}@${kept.branch}`,
    );
  return kept;
}
