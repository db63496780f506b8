// A throwaway local store with an injectable clock, and the assertions every ops suite shares.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasCode, type ErrorCode, type OffshootError } from '../../src/core/errors.js';
import type { Target } from '../../src/core/target.js';
import { makeContext, type OpsContext } from '../../src/ops/helpers/context/context.js';
import { exportTo } from '../../src/ops/export.js';
import type { Backend } from '../../src/store/backend.js';
import { LocalBackend } from '../../src/store/local/local-backend.js';
import { parseStoreSpec, type StoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import { dump } from './sqlite-cli.js';

/** A clock tests move by hand; it starts years in the past so backdated checkout mtimes never meet real ones. */
export class ManualClock {
  private ms: number;

  constructor(start: string = '2020-01-01T00:00:00.000Z') {
    this.ms = Date.parse(start);
  }

  /** The current instant. */
  readonly now = (): Date => new Date(this.ms);

  /** Moves time forward. */
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** One test's store: a temp directory holding the store and the checkout root. */
export interface TestStore {
  dir: string;
  spec: StoreSpec;
  store: Store;
  ctx: OpsContext;
  clock: ManualClock;
  /** Another context on the same store (its own holder, clock and options). */
  context(over?: Partial<Omit<OpsContext, 'store' | 'checkoutRoot'>>): OpsContext;
  /** A fresh path inside the test directory. */
  tmpPath(name: string): string;
  cleanup(): Promise<void>;
}

/** Options for a test store. */
export interface TestStoreOptions {
  forkFloor?: number;
  snapshotEvery?: number;
  /** Wraps the local backend (e.g. with a request counter). */
  wrap?: (b: Backend) => Backend;
  warn?: (m: string) => void;
  /** The directory to make the test's temp directory in (default: the OS temp dir). */
  parent?: string;
  /** The store's layout (default: what `offshoot init` writes); 3 lets writers merge segments. */
  layout?: number;
}

/** Initializes a fresh local store in a temp directory, with checkouts under the same directory. */
export async function openTestStore(opts: TestStoreOptions = {}): Promise<TestStore> {
  const dir = mkdtempSync(path.join(opts.parent ?? os.tmpdir(), 'offshoot-'));
  mkdirSync(path.join(dir, 'tmp'));
  const spec = parseStoreSpec(path.join(dir, 'store'));
  await Store.init(spec, opts.layout === undefined ? {} : { layout: opts.layout });
  const local = new LocalBackend(path.join(dir, 'store'));
  const store = await Store.open(spec, { backend: opts.wrap ? opts.wrap(local) : local });
  const clock = new ManualClock();
  const base = {
    now: clock.now,
    warn: opts.warn ?? (() => undefined),
    ...(opts.forkFloor !== undefined ? { forkFloor: opts.forkFloor } : {}),
    ...(opts.snapshotEvery !== undefined ? { snapshotEvery: opts.snapshotEvery } : {}),
  };
  const ctx = makeContext(store, dir, base);
  let n = 0;
  return {
    dir,
    spec,
    store,
    ctx,
    clock,
    context: (over = {}) => makeContext(store, dir, { ...base, ...over }),
    tmpPath: (name) => path.join(dir, 'tmp', `${n++}-${name}`),
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Asserts that p rejects with an offshoot error of the given code, and returns it. */
export async function rejectsCode(p: Promise<unknown>, code: ErrorCode): Promise<OffshootError> {
  let caught: unknown;
  await assert.rejects(p, (err: unknown) => {
    caught = err;
    return true;
  });
  assert.ok(
    hasCode(caught, code),
    `expected code ${code}, got ${(caught as { code?: string }).code}: ${(caught as Error).message}`,
  );
  return caught as OffshootError;
}

/** Exports a branch head (or checkpoint) to a temp file and returns its `.dump`. */
export async function exportDump(ts: TestStore, t: Target, ctx: OpsContext = ts.ctx): Promise<string> {
  const out = ts.tmpPath('export.db');
  await exportTo(ctx, t, out, { force: true });
  return dump(out);
}

/** Every key in the store with its etag (content hash), to prove a refused call wrote nothing. */
export async function storeSnapshot(store: Store): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const o of await store.backend.list('')) {
    const got = await store.backend.get(o.key);
    out.set(o.key, got.etag);
  }
  return out;
}
