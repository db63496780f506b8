import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fail } from '../core/errors.js';
import type { Target } from '../core/target.js';
import { commitRename, tempPathFor } from '../platform/atomic-file.js';
import type { OpsContext } from './helpers/context.js';
import { materializeUncached } from './helpers/materialize.js';
import { resolveTargetChain } from './helpers/resolve-target.js';

/**
 * `offshoot export db[@b[@cp]] <out>`: writes the durable state (head, or a checkpoint) to any local path —
 * atomically, every member verified before the rename; parent directories are created. No sidecar, no lease, and
 * no read-only cache entry: the state streams into the destination (a valid cached entry is cloned if there is one).
 */
export async function exportTo(
  ctx: OpsContext,
  t: Target,
  out: string,
  opts: { force?: boolean } = {},
): Promise<{ path: string; txid: number }> {
  const path = resolve(out);
  if (existsSync(path) && !opts.force) {
    throw fail('ALREADY_EXISTS', `${path} already exists`, {
      hint: 'pass --force to overwrite it, or choose another path',
    });
  }
  const chain = await resolveTargetChain(ctx, t);
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    const m = await materializeUncached(ctx, t.db, chain, tmp, `export ${path}`);
    await commitRename(tmp, path);
    return { path, txid: m.txid };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
