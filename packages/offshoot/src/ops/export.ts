import { existsSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fail } from '../core/errors.js';
import type { Target } from '../core/target.js';
import { commitRename, tempPathFor } from '../platform/atomic-file.js';
import { isWithin } from '../platform/real-path.js';
import type { OpsContext } from './helpers/context/context.js';
import { explainDamage } from './helpers/context/damaged-object.js';
import { materializeUncached } from './helpers/chain/materialize.js';
import { managedUnder } from './helpers/context/paths.js';
import { resolveTargetChain } from './helpers/branch/resolve-target.js';

/**
 * `offshoot export db[@b[@cp]] <out>`: writes the durable state (head, or a checkpoint) to any local path —
 * atomically, every member verified before the rename; parent directories are created. No sidecar, no lease, and
 * no read-only cache entry: the state streams into the destination (a valid cached entry is cloned if there is one).
 * A path inside the store or the checkout root, or a directory, is refused.
 */
export async function exportTo(
  ctx: OpsContext,
  t: Target,
  out: string,
  opts: { force?: boolean } = {},
): Promise<{ path: string; txid: number }> {
  const path = resolve(out);
  refuseOwnFiles(ctx, path);
  if (existsSync(path) && statSync(path).isDirectory())
    throw fail('INVALID_ARGUMENT', `export: ${path} is a directory`, {
      hint: `name the file to write, e.g. ${path.replace(/\/$/, '')}/${t.db}.db`,
    });
  if (existsSync(path) && !opts.force) {
    throw fail('ALREADY_EXISTS', `${path} already exists`, {
      hint: 'pass --force to overwrite it, or choose another path',
      hints: { agent: 'choose another path', sdk: 'pass force to overwrite it, or choose another path' },
    });
  }
  const chain = await resolveTargetChain(ctx, t);
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    const m = await explainDamage(ctx, t, () => materializeUncached(ctx, t.db, chain, tmp, `export ${path}`));
    await commitRename(tmp, path);
    return { path, txid: m.txid };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

// Export writes a plain file; one inside the store or the checkout root would overwrite a ref, a data object or
// another branch's checkout, which no --force may do.
function refuseOwnFiles(ctx: OpsContext, path: string): void {
  const roots = [...managedUnder(ctx.checkoutRoot), ...(ctx.store.spec.kind === 'local' ? [ctx.store.spec.root] : [])];
  const inside = roots.find((root) => isWithin(path, root));
  if (inside === undefined) return;
  throw fail('INVALID_ARGUMENT', `export: ${path} is inside ${inside}, which offshoot manages`, {
    hint: 'export to a path outside the store and its checkouts; use checkout for a working copy',
  });
}
