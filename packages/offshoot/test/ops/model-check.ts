// Checks a store against the property tests' model: the model's branches, heads and checkpoints become a DumpModel,
// which DumpVerifier compares with every ref and materializes, state by state, to the model's `.dump`.
import type { TestStore } from './harness.js';
import { DumpVerifier, type DumpModel } from './dump-model.js';
import type { StoreModel } from './store-model.js';

/**
 * Verifies a store against a StoreModel, step after step, remembering chains already compared; `forget()` makes
 * the next check materialize everything from the store again (done after every GC and periodically).
 */
export class StoreVerifier {
  private readonly dumps: DumpVerifier;

  constructor(ts: TestStore) {
    this.dumps = new DumpVerifier(ts);
  }

  /** Forgets every chain seen, so the next check re-reads all objects from the store. */
  forget(): void {
    this.dumps.forget();
  }

  /** Asserts that the store holds exactly what the model says; throws an AssertionError naming the first mismatch. */
  async verify(model: StoreModel): Promise<void> {
    const expected: DumpModel = new Map(
      model
        .list()
        .map((b) => [`${b.db}@${b.branch}`, { head: { txid: b.headTxid, dump: b.head }, checkpoints: b.checkpoints }]),
    );
    await this.dumps.verify(expected, 'model');
  }
}
