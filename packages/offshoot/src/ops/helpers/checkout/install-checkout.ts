import { statSync, utimesSync } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Ref } from '../../../core/ref.js';
import { tempPathFor } from '../../../platform/atomic-file.js';
import { backdatedSeconds, fingerprintOf, writeSidecar } from '../../../sqlite/checkout-sidecar.js';
import { cloneOrCopy } from '../../../sqlite/clone-file.js';
import { writePageSums } from '../../../sqlite/page-sums.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import { headIdentity } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { explainDamage } from '../context/damaged-object.js';
import { checkoutPath } from '../context/paths.js';
import { cachedChain } from '../chain/materialize.js';

/**
 * Materializes a ref's head at the branch's checkout path. The new file is built privately and renamed into place,
 * so a connection on the old file never sees it rewritten; the caller has quiesced any existing checkout, so the
 * old -wal/-shm (empty) are removed rather than replayed onto the new file. The sidecars are written first, naming
 * the private file's inode and the mtime it is about to get: until the rename they describe a file that is not at
 * the path, so they can never vouch for the wrong content.
 */
export async function installCheckout(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  label = `checkout ${db}@${branch}`,
): Promise<string> {
  const path = checkoutPath(ctx.checkoutRoot, db, branch);
  await mkdir(dirname(path), { recursive: true });
  const chain = await new ChainResolver(ctx.store).resolve(ref.lineage, ref.head_txid);
  const tmp = tempPathFor(path);
  try {
    for (let attempt = 0; ; attempt++) {
      const entry = await explainDamage(ctx, { db, branch }, () => cachedChain(ctx, db, chain, label));
      await writeFile(tmp, '', { mode: 0o644 });
      const past = backdatedSeconds(ctx.now().getTime());
      const planned = {
        size: entry.result.commit * entry.result.pageSize,
        mtime_ns: (BigInt(past) * 1_000_000_000n).toString(),
        ino: statSync(tmp, { bigint: true }).ino.toString(),
      };
      const m = entry.result;
      await writePageSums(path, m.sums);
      await writeSidecar(path, {
        ...headIdentity(ref),
        ltx_checksum: m.checksum.toString(16),
        page_size: m.pageSize,
        commit: m.commit,
        ...planned,
      });
      try {
        await cloneOrCopy(entry.path, tmp);
      } catch (err) {
        // The ro-cache janitor may evict an entry between lookup and clone; rebuilding it is always correct.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 2) throw err;
        continue;
      }
      await chmod(tmp, 0o644);
      utimesSync(tmp, past, past);
      const fp = fingerprintOf(tmp);
      if (fp.size !== planned.size || fp.mtime_ns !== planned.mtime_ns || fp.ino !== planned.ino) {
        await writeSidecar(path, {
          ...headIdentity(ref),
          ltx_checksum: m.checksum.toString(16),
          page_size: m.pageSize,
          commit: m.commit,
          ...fp,
        });
      }
      break;
    }
    await rm(`${path}-wal`, { force: true });
    await rm(`${path}-shm`, { force: true });
    // No directory fsync: if a crash loses the rename, the old file is back at the path under sidecars that name the
    // new inode, which reads as modified, never as clean.
    await rename(tmp, path);
    return path;
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
