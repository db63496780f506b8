import { existsSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Target } from '../core/target.js';
import { commitRename, tempPathFor } from '../platform/atomic-file.js';
import type { OpsContext } from './helpers/context.js';
import { explainDamage } from './helpers/damaged-object.js';
import { materializeTo } from './helpers/materialize.js';
import { readOnlyCheckoutPath } from './helpers/paths.js';
import { resolveTargetChain } from './helpers/resolve-target.js';

/**
 * `offshoot checkout db[@b] --at <cp> --read-only`: an immutable (0444) checkout of a named checkpoint under
 * checkouts-ro/. A repeat call is served from that file with no store access (checkpoints never change); --force
 * re-materializes it.
 */
export async function checkoutAt(
  ctx: OpsContext,
  t: Target,
  checkpoint: string,
  opts: { force?: boolean } = {},
): Promise<{ path: string; cached: boolean }> {
  const path = readOnlyCheckoutPath(ctx.checkoutRoot, t.db, t.branch, checkpoint);
  const marker = `${path}.last-used`;
  if (existsSync(path) && !opts.force) {
    await writeFile(marker, '');
    return { path, cached: true };
  }
  const chain = await resolveTargetChain(ctx, { ...t, checkpoint });
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    await explainDamage(ctx, t, () => materializeTo(ctx, t.db, chain, tmp));
    await chmod(tmp, 0o444);
    await commitRename(tmp, path);
    await writeFile(marker, '');
    return { path, cached: false };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
