// The reference model of a store: per branch, the `.dump` at head and at every checkpoint, plus the model's own
// plain-SQLite copy of each checkout, which receives exactly the writes the real checkout receives.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { restoreDump } from './sqlite-cli.js';

/** A checkpoint as the model expects it. */
export interface CheckpointModel {
  txid: number;
  dump: string;
}

/** A writable checkout as the model sees it. */
export interface CheckoutModel {
  /** The model's private SQLite copy of the checkout's content. */
  file: string;
  /** Written since it was materialized or checkpointed. */
  dirty: boolean;
  /** The branch was repointed underneath it (a safety fork replaced the branch). */
  stale: boolean;
}

/** One branch as the model expects it. */
export interface BranchModel {
  db: string;
  branch: string;
  headTxid: number;
  head: string;
  checkpoints: Map<string, CheckpointModel>;
  ttl: boolean;
  protected: boolean;
  checkout?: CheckoutModel;
  /** Set on an undo point: the branch it was kept for. */
  undoOf?: string;
}

/** The name a safety fork of `branch` gets, as the engine derives it. */
export function safetyName(branch: string, suffix: 'pre-rollback' | 'pre-promote'): string {
  return `${branch}-${suffix}`.slice(0, 128);
}

/**
 * Whether a rollback or promote of `owner` may write its undo point at `name`: nothing is there, or an undo point of
 * `owner` nobody has used since (no checkpoint but `fork` and `compact`, all at its head).
 */
export function undoSlotFree(model: StoreModel, db: string, name: string, owner: string): boolean {
  const b = model.branches.get(`${db}@${name}`);
  if (b === undefined) return true;
  if (b.undoOf !== owner || !b.checkpoints.has('fork')) return false;
  return [...b.checkpoints].every(([n, c]) => (n === 'fork' || n === 'compact') && c.txid === b.headTxid);
}

/** Every branch the store should hold, keyed `db@branch`. */
export class StoreModel {
  readonly branches = new Map<string, BranchModel>();

  constructor(
    /** The `.dump` of an empty database. */
    readonly emptyDump: string,
    private readonly newFile: (name: string) => string,
  ) {}

  /** The branch, which must exist. */
  get(db: string, branch: string): BranchModel {
    const b = this.branches.get(`${db}@${branch}`);
    assert.ok(b, `model has no branch ${db}@${branch}`);
    return b;
  }

  /** Adds or replaces a branch; a replaced branch's checkout is refreshed to the new head, as the engine does. */
  put(b: BranchModel): void {
    const old = this.branches.get(`${b.db}@${b.branch}`);
    this.branches.set(`${b.db}@${b.branch}`, b);
    if (old?.checkout) {
      b.checkout = old.checkout;
      this.materialize(b);
    }
  }

  /** Forgets a branch and its checkout copy. */
  remove(db: string, branch: string): void {
    const b = this.get(db, branch);
    if (b.checkout) rmSync(b.checkout.file, { force: true });
    this.branches.delete(`${db}@${branch}`);
  }

  /** Every branch, in a stable order. */
  list(): BranchModel[] {
    return [...this.branches.values()].sort((a, b) => `${a.db}@${a.branch}`.localeCompare(`${b.db}@${b.branch}`));
  }

  /** The model side of (re)materializing a branch's checkout: its copy now holds the head, clean and current. */
  materialize(b: BranchModel): void {
    if (b.checkout) rmSync(b.checkout.file, { force: true });
    const file = this.newFile(`model-${b.db}-${b.branch}.db`);
    restoreDump(file, b.head);
    b.checkout = { file, dirty: false, stale: false };
  }
}
