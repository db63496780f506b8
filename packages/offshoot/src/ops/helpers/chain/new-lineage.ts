import { join } from 'node:path';
import { snapshotKey } from '../../../core/keys.js';
import { newLineageId } from '../../../core/lineage.js';
import type { BasePointer } from '../../../core/ref.js';
import { encodeSnapshotFromDb } from '../../../ltx/encoder.js';
import type { ChainResolver } from '../../../store/chain-resolver.js';
import type { OpsContext } from '../context/context.js';
import { materializeTo } from './materialize.js';
import { withTempDir } from '../context/temp-dir.js';

/** How a new lineage reproduces its starting state: by a base pointer (shared) or its own snapshot (materialized). */
export interface NewLineage {
  lineage: string;
  base?: BasePointer;
  mode: 'shared' | 'materialized';
  /** For materialized lineages: a server-side or reflink copy of one snapshot (fast) or a decode and re-encode (slow). */
  path?: 'fast' | 'slow';
  /** Chain member keys the new lineage depends on (for the post-write tombstone check). */
  dependsOn: string[];
}

/**
 * Writes a snapshot of `lineage` at `txid` as the txid's snapshot of `into` (epoch 1): a backend copy when the chain
 * is a single snapshot at exactly that txid, else materialize and re-encode.
 */
export async function copySnapshot(
  ctx: OpsContext,
  db: string,
  resolver: ChainResolver,
  lineage: string,
  txid: number,
  into: string,
  label?: string,
): Promise<'fast' | 'slow'> {
  const chain = await resolver.resolve(lineage, txid);
  const only = chain.members[0];
  const dst = snapshotKey(into, 1, txid);
  if (chain.members.length === 1 && only !== undefined && only.kind === 'snapshot' && only.maxTxid === txid) {
    await ctx.store.backend.copy(only.key, dst, { ifNoneMatch: true });
    return 'fast';
  }
  await withTempDir(ctx, async (dir) => {
    const file = join(dir, 'state.db');
    await materializeTo(ctx, db, chain, file, label);
    const ltx = join(dir, 'snapshot.ltx');
    await encodeSnapshotFromDb(file, ltx, { txid, timestamp: ctx.now().getTime() });
    await ctx.store.putData(dst, { file: ltx });
  });
  return 'slow';
}

/**
 * Starts a fresh lineage that reads as `lineage` at `txid` — the one helper fork, rollback and promote share. It
 * shares through a collapsed base pointer unless asked to materialize or the chain (members or spine) is at the floor.
 */
export async function newLineageAt(...args: Parameters<typeof planLineageAt>): Promise<NewLineage> {
  const fresh = await planLineageAt(...args);
  if (fresh.base !== undefined) await args[0].store.writeBase(fresh.lineage, fresh.base);
  return fresh;
}

/**
 * newLineageAt without writing the base pointer of a shared lineage: the caller writes it together with the ref that
 * names it (Store.createForkRefs, one group commit). A materialized lineage's snapshot is written here.
 */
export async function planLineageAt(
  ctx: OpsContext,
  db: string,
  resolver: ChainResolver,
  lineage: string,
  txid: number,
  opts: LineageOptions = {},
): Promise<NewLineage> {
  const chain = await resolver.resolve(lineage, txid);
  const id = (opts.newId ?? newLineageId)();
  const dependsOn = [...chain.members.map((m) => m.key), ...chain.baseKeys];
  // Merged segments keep members bounded, but a merge may reach through its base lineages, so forks of forks deepen
  // the spine (one base pointer per generation); the floor bounds both.
  if (opts.materialize || chain.members.length >= ctx.forkFloor || chain.spine.length >= ctx.forkFloor) {
    const path = await copySnapshot(ctx, db, resolver, lineage, txid, id);
    return { lineage: id, mode: 'materialized', path, dependsOn };
  }
  const base = await resolver.collapseBase(lineage, txid);
  return { lineage: id, base, mode: 'shared', dependsOn };
}

/** How a fresh lineage is made: materialized whatever the chain, and where its id comes from (an ephemeral fork's is held). */
export interface LineageOptions {
  materialize?: boolean;
  newId?: () => string;
}

/** Fresh lineages that all read as one state: how they share it, and one new lineage per call of next. */
export interface NewLineages {
  mode: 'shared' | 'materialized';
  path?: 'fast' | 'slow';
  dependsOn: string[];
  /** Starts the i-th lineage: its own snapshot at the floor, else a base pointer left for the caller to write. */
  next(i: number): Promise<NewLineage>;
}

/**
 * planLineageAt for many lineages at one state (a batch fork): the chain is resolved and the base pointer collapsed
 * once, so each lineage then costs only its own create-only base.json, which the caller writes with the refs in one
 * group commit (or, at the floor, its own snapshot, written here).
 */
export async function newLineagesAt(
  ctx: OpsContext,
  db: string,
  resolver: ChainResolver,
  lineage: string,
  txid: number,
  opts: Pick<LineageOptions, 'newId'> = {},
): Promise<NewLineages> {
  const newId = opts.newId ?? newLineageId;
  const chain = await resolver.resolve(lineage, txid);
  const dependsOn = [...chain.members.map((m) => m.key), ...chain.baseKeys];
  if (chain.members.length >= ctx.forkFloor || chain.spine.length >= ctx.forkFloor) {
    const only = chain.members[0];
    const fast = chain.members.length === 1 && only?.kind === 'snapshot' && only.maxTxid === txid;
    return {
      mode: 'materialized',
      path: fast ? 'fast' : 'slow',
      dependsOn,
      next: async () => {
        const id = newId();
        const path = await copySnapshot(ctx, db, resolver, lineage, txid, id);
        return { lineage: id, mode: 'materialized', path, dependsOn };
      },
    };
  }
  const base = await resolver.collapseBase(lineage, txid);
  return {
    mode: 'shared',
    dependsOn,
    next: () => Promise.resolve({ lineage: newId(), base, mode: 'shared', dependsOn }),
  };
}
