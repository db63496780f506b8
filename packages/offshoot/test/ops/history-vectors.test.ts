// The stores the earlier implementation wrote (test/vectors/stores, copied) against the branch log: their refs have
// no log, which reads as none and never as an error; the first change starts one, and leaves every field the earlier
// implementation reads as it was; a txid of their history is a moment through the branch's ancestry.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeContext } from '../../src/ops/context.js';
import { exportTo } from '../../src/ops/export.js';
import { readLog } from '../../src/ops/log.js';
import { touch } from '../../src/ops/touch.js';
import { parseStoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import { dumpHash } from '../e2e/cli-harness.js';

const VECTORS = fileURLToPath(new URL('../vectors/stores/', import.meta.url));
const EXPECTED = JSON.parse(readFileSync(path.join(VECTORS, 'expected.json'), 'utf8')) as Record<
  string,
  { dump_sha256: string }
>;

describe("the earlier implementation's stores and the branch log", () => {
  it('refs without a log read as none, the first change starts one, and every earlier field is kept', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-vec-'));
    try {
      const root = path.join(dir, 'branches');
      cpSync(path.join(VECTORS, 'branches'), root, { recursive: true });
      const store = await Store.open(parseStoreSpec(root));
      const ctx = makeContext(store, root);
      try {
        for (const branch of await store.listBranches('shop')) {
          const log = await readLog(ctx, { db: 'shop', branch });
          assert.equal(log.live, true);
          assert.equal(log.logId, undefined, `${branch} has no log yet`);
          assert.deepEqual(log.records, []);
        }
        const before = JSON.parse(readFileSync(path.join(root, 'refs/shop/a1'), 'utf8')) as Record<string, unknown>;
        await touch(ctx, { db: 'shop', branch: 'a1' });
        const after = JSON.parse(readFileSync(path.join(root, 'refs/shop/a1'), 'utf8')) as Record<string, unknown>;
        for (const [k, v] of Object.entries(before))
          if (k !== 'touched_at' && k !== 'protected') assert.deepEqual(after[k], v, `${k} is as it was`);
        const log = await readLog(ctx, { db: 'shop', branch: 'a1' });
        assert.deepEqual(
          log.records.map((r) => [r.seq, r.op, r.txid_before, r.txid_after]),
          [[1, 'touch', 3, 3]],
        );
        // Txid 2 was written before any log existed: the branch's ancestry there is its fork point.
        const out = path.join(dir, 'tx2.db');
        await exportTo(ctx, { db: 'shop', branch: 'a1', checkpoint: 'tx:2' }, out);
        assert.equal(await dumpHash(out), EXPECTED['branches/shop@a1@fork']?.dump_sha256);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
