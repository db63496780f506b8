import { fail } from './errors.js';
import type { DataObject } from './keys.js';
import type { BasePointer } from './ref.js';

/** The part of a chain that one lineage supplies, plus where (if anywhere) resolution continues in its base. */
export interface LineageHalf {
  /** Members in ascending txid order. */
  members: DataObject[];
  /** Set when resolution falls through the base pointer: the txid the base lineage must resolve to exactly. */
  continueAt?: number;
}

/**
 * Picks, for each maxTxid, the object of the highest epoch (snapshots and segments together); within one epoch the
 * one reaching lowest wins, so a snapshot beats a segment and a merged segment beats the members it covers. The
 * epoch comes first because only an epoch orders a fenced writer's orphan below the winner at the same txid; every
 * merged segment is built from settled members at or below a recorded head, so whichever object wins reproduces the
 * same state.
 */
export function dedupByEpoch(objects: readonly DataObject[]): Map<number, DataObject> {
  const best = new Map<number, DataObject>();
  for (const o of objects) {
    const cur = best.get(o.maxTxid);
    if (cur === undefined || o.epoch > cur.epoch || (o.epoch === cur.epoch && o.minTxid < cur.minTxid)) {
      best.set(o.maxTxid, o);
    }
  }
  return best;
}

/**
 * A lineage with no object and no base pointer. Its ref exists, so it is what a crash leaves of a fork whose ref
 * reached the disk and whose base.json did not (a torn fork: the fork never answered), or of a store that lost objects.
 */
function tornLineage(lineage: string): Error {
  return fail(
    'CORRUPT',
    `lineage ${lineage} has no objects and no base pointer: a torn fork (a crash cut the fork short before its base.json reached the disk) or a store missing objects`,
    { hint: 'fork the branch again under the same name (a torn fork is replaced), or destroy it' },
  );
}

/**
 * Resolves one lineage's half of a chain at `target`: the newest snapshot at or below it plus contiguous
 * segments, never mixing in another lineage's objects; below the base pointer it stops and says where the
 * base lineage must continue. A merged segment of this lineage may reach below the base pointer's txid (it holds
 * the base's pages of that span too); the base lineage then continues just below it.
 */
export function resolveLineageHalf(
  lineage: string,
  objects: readonly DataObject[],
  target: number,
  base?: BasePointer,
): LineageHalf {
  const best = dedupByEpoch(objects.filter((o) => o.lineage === lineage));
  const members: DataObject[] = [];
  let t = target;
  for (;;) {
    if (base !== undefined && t <= base.txid) {
      members.reverse();
      return { members, continueAt: t };
    }
    if (t <= 0)
      throw fail('CORRUPT', `chain of lineage ${lineage} at txid ${target} has no snapshot`, {
        hint: 'the store is missing objects; restore them or destroy the branch',
      });
    const o = best.get(t);
    if (o === undefined && base === undefined && best.size === 0) throw tornLineage(lineage);
    if (o === undefined) {
      throw fail('CORRUPT', `chain of lineage ${lineage} at txid ${target} has a gap: no object ends at txid ${t}`, {
        hint: 'the store is missing objects; restore them or destroy the branch',
      });
    }
    members.push(o);
    if (o.kind === 'snapshot') {
      members.reverse();
      return { members };
    }
    t = o.minTxid - 1;
  }
}
