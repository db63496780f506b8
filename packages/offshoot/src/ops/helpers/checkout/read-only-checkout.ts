import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { named } from '../../../core/name-map.js';
import type { Target } from '../../../core/target.js';
import { commitRename, tempPathFor } from '../../../platform/atomic-file.js';
import { resolvePoint } from '../history/point.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import { readBranch } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';
import { explainDamage } from '../context/damaged-object.js';
import { materializeTo } from '../chain/materialize.js';
import { readOnlyCheckoutPath } from '../context/paths.js';

/** What a read-only checkout's `.id` sidecar records: the checkpoint it holds, and the file as it was written. */
interface Served {
  checkpoint: string;
  size: number;
  mtimeMs: number;
}

/**
 * `offshoot checkout db[@b] --at <cp> --read-only`: an immutable (0444) checkout of a named checkpoint under
 * checkouts-ro/. A repeat call reads only the ref: the file is served again while it still holds the checkpoint
 * of that name (lineage, txid, epoch and time it was made: a rollback and a new checkpoint of the same name is
 * another one) and is the file offshoot wrote (size and mtime); otherwise it is re-materialized, as with --force.
 */
export async function readOnlyCheckout(
  ctx: OpsContext,
  t: Target,
  checkpoint: string,
  opts: { force?: boolean } = {},
): Promise<{ path: string; cached: boolean }> {
  const { ref } = await readBranch(ctx, t.db, t.branch);
  const p = await resolvePoint(ctx, t, ref, checkpoint);
  // A moment's file is named for the txid it resolved to (`tx:` is in no checkpoint name), and holds that state
  // while its lineage is the one recorded.
  const moment = p.moment !== undefined;
  const path = readOnlyCheckoutPath(ctx.checkoutRoot, t.db, t.branch, moment ? `tx:${p.txid}` : checkpoint);
  const marker = `${path}.last-used`;
  const identity = JSON.stringify(
    moment ? { lineage: p.lineage, txid: p.txid } : { lineage: ref.lineage, ...named(ref.checkpoints, checkpoint) },
  );
  if (!opts.force && (await serves(path, identity))) {
    await writeFile(marker, '');
    return { path, cached: true };
  }
  const chain = await new ChainResolver(ctx.store).resolve(p.lineage, p.txid);
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    await explainDamage(ctx, t, () => materializeTo(ctx, t.db, chain, tmp));
    await chmod(tmp, 0o444);
    await rm(`${path}.id`, { force: true });
    await commitRename(tmp, path);
    const st = await stat(path);
    const served: Served = { checkpoint: identity, size: st.size, mtimeMs: st.mtimeMs };
    await writeFile(`${path}.id`, JSON.stringify(served));
    await writeFile(marker, '');
    return { path, cached: false };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Whether the file at path is the one offshoot wrote for this checkpoint identity. */
async function serves(path: string, identity: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  try {
    const served = JSON.parse(await readFile(`${path}.id`, 'utf8')) as Served;
    const st = await stat(path);
    return served.checkpoint === identity && served.size === st.size && served.mtimeMs === st.mtimeMs;
  } catch {
    return false;
  }
}
