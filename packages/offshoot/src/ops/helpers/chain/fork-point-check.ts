import { fail } from '../../../core/errors.js';
import { readTombstones } from '../../../store/tombstones.js';
import type { OpsContext } from '../context/context.js';

/**
 * After a new ref names a fork point, checks that GC has not condemned (tombstoned) or already deleted any object
 * the new lineage depends on; GC's re-mark may have run before the ref existed. Throws a retryable BUSY if so.
 */
export async function checkForkPointLive(ctx: OpsContext, dependsOn: readonly string[]): Promise<void> {
  // Each object is looked for among its own directory's keys: the listing covers the chain's epochs, not every
  // object the lineage has ever written, and names no sizes.
  const byDir = new Map<string, Set<string>>();
  for (const key of dependsOn) {
    const prefix = key.slice(0, key.lastIndexOf('/') + 1);
    let set = byDir.get(prefix);
    if (!set) byDir.set(prefix, (set = new Set()));
    set.add(key);
  }
  // Both reads start after the caller's ref exists; neither depends on the other, so they overlap.
  const [{ stones }, listings] = await Promise.all([
    readTombstones(ctx.store.backend),
    Promise.all([...byDir.keys()].map((prefix) => ctx.store.backend.listKeys(prefix))),
  ]);
  const condemned = dependsOn.filter((k) => stones[k] !== undefined);
  for (const [i, keys] of [...byDir.values()].entries()) {
    const present = new Set(listings[i] ?? []);
    for (const k of keys) if (!present.has(k)) condemned.push(k);
  }
  if (condemned.length > 0) {
    throw fail('BUSY', `the fork point is being garbage collected (${condemned[0]})`, {
      retryable: true,
      hint: 'retry; the new branch was not created',
    });
  }
}
