// The expected content of a store, branch by branch, and the check that the store materializes to exactly it: every
// head and every checkpoint of every ref, branches half-way through a destroy included (they are read below
// readBranch, which would hide them), each compared by `.dump`.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { makeContext, type OpsContext } from '../../src/ops/helpers/context/context.js';
import { chainId, materializeTo } from '../../src/ops/helpers/chain/materialize.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import type { TestStore } from './harness.js';
import { dumpMany } from './sqlite-cli.js';

/** One state a branch must materialize to. */
export interface StateModel {
  txid: number;
  dump: string;
}

/** A branch as expected: its head and its checkpoints by name. */
export interface BranchDumps {
  head: StateModel;
  checkpoints: Map<string, StateModel>;
}

/** Every branch the store should hold, keyed `db@branch`. */
export type DumpModel = Map<string, BranchDumps>;

/** A branch model whose head and only checkpoint (named `name`) are `state`. */
export function branchAt(state: StateModel, name: string): BranchDumps {
  return { head: { ...state }, checkpoints: new Map([[name, { ...state }]]) };
}

/**
 * Checks a store against a DumpModel. A chain already materialized and compared is remembered by its member keys
 * (immutable, create-only objects), while its resolution is redone from fresh listings every time, so a missing
 * object still fails at once; `forget()` makes the next check materialize everything from the store again.
 */
export class DumpVerifier {
  private root = '';
  private ctx: OpsContext | undefined;
  private readonly seen = new Map<string, string>();

  constructor(private readonly ts: TestStore) {}

  /** Drops every remembered chain and the verifier's own chain cache. */
  forget(): void {
    if (this.root !== '') rmSync(this.root, { recursive: true, force: true });
    this.root = '';
    this.ctx = undefined;
    this.seen.clear();
  }

  private context(): OpsContext {
    if (this.ctx === undefined) {
      this.root = this.ts.tmpPath('verify');
      mkdirSync(this.root, { recursive: true });
      this.ctx = makeContext(this.ts.store, this.root, { now: this.ts.clock.now, warn: () => undefined });
    }
    return this.ctx;
  }

  /** Asserts the store holds exactly the model's branches and that each state materializes to its `.dump`. */
  async verify(model: DumpModel, why: string): Promise<void> {
    const store = this.ts.store;
    const actual = (await store.listAllBranches()).map((b) => `${b.db}@${b.branch}`).sort();
    assert.deepEqual(actual, [...model.keys()].sort(), `${why}: the branches in the store`);
    const ctx = this.context();
    const resolver = new ChainResolver(store);
    // Refs and chains are read for every branch at once; only materializing new chains is done one at a time.
    const states = (
      await Promise.all(
        [...model].map(async ([name, b]) => {
          const [db, branch] = name.split('@') as [string, string];
          const { ref } = await store.getRef(db, branch);
          assert.equal(ref.head_txid, b.head.txid, `${why}: ${name} head txid`);
          assert.deepEqual(
            Object.keys(ref.checkpoints).sort(),
            [...b.checkpoints.keys()].sort(),
            `${why}: ${name} checkpoints`,
          );
          const wanted: Array<[string, StateModel]> = [['head', b.head]];
          for (const [cp, s] of b.checkpoints) {
            assert.equal(ref.checkpoints[cp]?.txid, s.txid, `${why}: ${name} checkpoint ${cp} txid`);
            wanted.push([cp, s]);
          }
          return Promise.all(
            wanted.map(async ([label, s]) => ({
              db,
              what: `${why}: ${name} ${label} (txid ${s.txid})`,
              state: s,
              chain: await resolver.resolve(ref.lineage, s.txid),
            })),
          );
        }),
      )
    ).flat();
    const fresh: Array<{ what: string; id: string; file: string; dump: string }> = [];
    for (const { db, what, state, chain } of states) {
      const id = chainId(chain.members);
      const known = this.seen.get(id) ?? fresh.find((f) => f.id === id)?.dump;
      if (known !== undefined) {
        assert.equal(known, state.dump, `${what} materializes to the model's dump`);
        continue;
      }
      const file = path.join(this.root, `${this.seen.size + fresh.length}.db`);
      const m = await materializeTo(ctx, db, chain, file);
      assert.equal(m.txid, state.txid, `${what} materializes at its txid`);
      fresh.push({ what, id, file, dump: state.dump });
    }
    const dumps = dumpMany(fresh.map((f) => f.file));
    for (const [i, f] of fresh.entries()) {
      assert.equal(dumps[i], f.dump, `${f.what} materializes to the model's dump`);
      this.seen.set(f.id, f.dump);
      rmSync(f.file, { force: true });
    }
  }
}
