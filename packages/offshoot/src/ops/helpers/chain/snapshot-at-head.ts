import { join } from 'node:path';
import { hasCode } from '../../../core/errors.js';
import { type DataObject, parseDataKey, snapshotKey } from '../../../core/keys.js';
import { encodeSnapshotFromDb } from '../../../ltx/encoder.js';
import type { OpsContext } from '../context/context.js';
import { withTempDir } from '../context/temp-dir.js';
import { materializeUncached } from './materialize.js';

/** The snapshot written at a chain's head: the object and what it cost. */
export interface HeadSnapshot {
  object: DataObject;
  pages: number;
  bytes: number;
}

/**
 * Bounds a chain the way the earlier implementation did, for a store below the merged layout: the state at `head`
 * (the chain's, oldest member first) is written as `snapshot-{head}` of `lineage` under `epoch`, the ref's, create-only.
 * Like a merged segment it never moves the ref: at its txid it wins over the members it replaces, in both
 * implementations (a higher epoch, or at the same epoch a snapshot over a segment), and reproduces their state, so a
 * flush racing it lands above it; the members stay until GC finds no chain resolving through them.
 */
export async function snapshotAtHead(
  ctx: OpsContext,
  db: string,
  lineage: string,
  head: number,
  epoch: number,
  chain: readonly DataObject[],
): Promise<HeadSnapshot> {
  const key = snapshotKey(lineage, epoch, head);
  return withTempDir(ctx, async (dir) => {
    const state = join(dir, 'state.db');
    await materializeUncached(ctx, db, { txid: head, members: [...chain], spine: [], baseKeys: [] }, state);
    const out = join(dir, 'snapshot.ltx');
    const { commit, size } = await encodeSnapshotFromDb(state, out, { txid: head, timestamp: ctx.now().getTime() });
    try {
      await ctx.store.putData(key, { file: out, handOver: true });
    } catch (err) {
      // Only another bounding of this very head at this epoch can own the key: it holds the same state.
      if (!hasCode(err, 'ALREADY_EXISTS')) throw err;
    }
    return { object: { ...(parseDataKey(key) as DataObject), size }, pages: commit, bytes: size };
  });
}
