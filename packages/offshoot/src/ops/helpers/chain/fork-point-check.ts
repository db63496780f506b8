import { fail } from '../../../core/errors.js';
import { readTombstones } from '../../../store/tombstones.js';
import type { OpsContext } from '../context/context.js';

/**
 * After a new ref names a fork point, checks that GC has not condemned (tombstoned) or already deleted any object
 * the new lineage depends on; GC's re-mark may have run before the ref existed. Throws a retryable BUSY if so.
 */
export async function checkForkPointLive(ctx: OpsContext, dependsOn: readonly string[]): Promise<void> {
  const byLineage = new Map<string, Set<string>>();
  for (const key of dependsOn) {
    const prefix = key.split('/').slice(0, 2).join('/') + '/';
    let set = byLineage.get(prefix);
    if (!set) byLineage.set(prefix, (set = new Set()));
    set.add(key);
  }
  // Both reads start after the caller's ref exists; neither depends on the other, so they overlap.
  const [{ stones }, listings] = await Promise.all([
    readTombstones(ctx.store.backend),
    Promise.all([...byLineage.keys()].map((prefix) => ctx.store.backend.list(prefix))),
  ]);
  const condemned = dependsOn.filter((k) => stones[k] !== undefined);
  for (const [i, keys] of [...byLineage.values()].entries()) {
    const present = new Set((listings[i] ?? []).map((o) => o.key));
    for (const k of keys) if (!present.has(k)) condemned.push(k);
  }
  if (condemned.length > 0) {
    throw fail('BUSY', `the fork point is being garbage collected (${condemned[0]})`, {
      retryable: true,
      hint: 'retry; the new branch was not created',
    });
  }
}
