import { inBatches } from '../core/in-batches.js';
import type { Backend, GroupCreateResult, NewObject } from './backend.js';

/** Create-only puts in flight at once when a backend has no group create of its own. */
const PUT_CONCURRENCY = 32;

/**
 * Creates objects in tiers through the backend's own group create, or else with one create-only put each (a put that
 * returns is durable), a tier's puts overlapping and the next tier started only once the whole tier has landed.
 */
export async function createInTiers(
  backend: Backend,
  tiers: readonly (readonly NewObject[])[],
): Promise<GroupCreateResult> {
  if (backend.createInTiers !== undefined) return backend.createInTiers(tiers);
  const created: string[] = [];
  for (const tier of tiers) {
    let failed: GroupCreateResult['failed'];
    try {
      await inBatches(tier, PUT_CONCURRENCY, async (o) => {
        try {
          await backend.put(o.key, o.body, { ifNoneMatch: true });
        } catch (error) {
          failed ??= { key: o.key, error };
          throw error;
        }
        created.push(o.key);
      });
    } catch (err) {
      // The first failure stopped the tier (puts in flight settled first); what it was is in `failed`.
      if (failed === undefined) throw err;
      return { created, failed };
    }
  }
  return { created };
}
