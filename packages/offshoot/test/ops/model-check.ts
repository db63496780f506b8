// Checks a store against its model: the same branches, heads and checkpoints in every ref, and every head and
// checkpoint materialized from the store to exactly the model's `.dump`.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { makeContext, type OpsContext } from '../../src/ops/context.js';
import { exportTo } from '../../src/ops/export.js';
import { chainId } from '../../src/ops/materialize.js';
import { ChainResolver } from '../../src/store/chain-resolver.js';
import type { TestStore } from './harness.js';
import { dumpMany } from './sqlite-cli.js';
import type { StoreModel } from './store-model.js';

interface Pending {
  what: string;
  chain: string;
  file: string;
  dump: string;
}

/**
 * Verifies a store against a model, step after step. Every state resolves its chain from the store each time (so a
 * missing object fails at once); a chain is exported and dumped the first time it is seen and remembered by its
 * member keys, which name immutable, create-only objects. `forget()` drops that memory and the export cache, so the
 * next check materializes everything from the store again (done after every GC and periodically).
 */
export class StoreVerifier {
  private root = '';
  private ctx: OpsContext | undefined;
  private readonly dumps = new Map<string, string>();

  constructor(private readonly ts: TestStore) {}

  /** Forgets every chain seen, so the next check re-reads all objects from the store. */
  forget(): void {
    if (this.root !== '') rmSync(this.root, { recursive: true, force: true });
    this.root = '';
    this.ctx = undefined;
    this.dumps.clear();
  }

  private context(): OpsContext {
    if (this.ctx === undefined) {
      this.root = this.ts.tmpPath('verify');
      mkdirSync(this.root, { recursive: true });
      this.ctx = makeContext(this.ts.store, this.root, { now: this.ts.clock.now, warn: () => undefined });
    }
    return this.ctx;
  }

  /** Asserts that the store holds exactly what the model says; throws an AssertionError naming the first mismatch. */
  async verify(model: StoreModel): Promise<void> {
    const ts = this.ts;
    const actual = (await ts.store.listAllBranches()).map((b) => `${b.db}@${b.branch}`).sort();
    assert.deepEqual(actual, [...model.branches.keys()].sort(), 'branches in the store');
    const ctx = this.context();
    const resolver = new ChainResolver(ts.store);
    const fresh: Pending[] = [];
    for (const b of model.list()) {
      const { ref } = await ts.store.getRef(b.db, b.branch);
      const name = `${b.db}@${b.branch}`;
      assert.equal(ref.head_txid, b.headTxid, `${name} head txid`);
      assert.deepEqual(Object.keys(ref.checkpoints).sort(), [...b.checkpoints.keys()].sort(), `${name} checkpoint names`);
      const states: Array<{ label: string; checkpoint?: string; txid: number; dump: string }> = [{ label: 'head', txid: b.headTxid, dump: b.head }];
      for (const [cp, m] of b.checkpoints) {
        assert.equal(ref.checkpoints[cp]?.txid, m.txid, `${name} checkpoint ${cp} txid`);
        states.push({ label: cp, checkpoint: cp, txid: m.txid, dump: m.dump });
      }
      for (const s of states) {
        const what = `${name} ${s.label} (txid ${s.txid})`;
        const chain = await resolver.resolve(ref.lineage, s.txid);
        const id = chainId(chain.members);
        const known = this.dumps.get(id) ?? fresh.find((f) => f.chain === id)?.dump;
        if (known !== undefined) {
          assert.equal(known, s.dump, `${what} must materialize to the model's dump`);
          continue;
        }
        const file = path.join(this.root, `${this.dumps.size + fresh.length}.db`);
        const r = await exportTo(ctx, { db: b.db, branch: b.branch, ...(s.checkpoint !== undefined ? { checkpoint: s.checkpoint } : {}) }, file);
        assert.equal(r.txid, s.txid, `${what} materializes at its txid`);
        fresh.push({ what, chain: id, file, dump: s.dump });
      }
    }
    const dumps = dumpMany(fresh.map((f) => f.file));
    for (const [i, f] of fresh.entries()) {
      assert.equal(dumps[i], f.dump, `${f.what} must materialize to the model's dump`);
      this.dumps.set(f.chain, f.dump);
      rmSync(f.file, { force: true });
    }
  }
}
