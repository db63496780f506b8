// A store's layout on a bucket: writers below layout 3 bound chains by snapshots and leave the manifest alone;
// `upgrade` is a compare-and-swap on it (two at once: one raises it, the other finds it raised), and a writer that
// opened the store before the upgrade merges once it has read the manifest again. On the S3 test server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseDataKey } from '../../src/core/keys.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { compactBranch } from '../../src/ops/helpers/chain/chain-writer.js';
import { exportDump } from '../ops/harness.js';
import { dump, runSql } from '../ops/sqlite-cli.js';
import { assertUpgradeRace } from '../store/layout-race.js';
import { s3Unavailable } from '../store/s3-test-env.js';
import { openS3TestStore, openTestS3Backend, type S3TestStore } from './s3-store.js';

const main = { db: 'app', branch: 'main' };

async function layoutOnBucket(ts: S3TestStore): Promise<number> {
  return JSON.parse((await ts.store.backend.get('offshoot.json')).body.toString('utf8')).layout_version;
}

async function mergedKeys(ts: S3TestStore): Promise<string[]> {
  return (await ts.store.backend.list('data/'))
    .map((o) => o.key)
    .filter((k) => {
      const d = parseDataKey(k);
      return d !== undefined && d.kind === 'segment' && d.minTxid < d.maxTxid;
    });
}

describe('store layout on S3', () => {
  if (s3Unavailable('store layout on S3')) return;
  let ts: S3TestStore;
  let co = '';
  const dumps = new Map<string, string>();

  /** n checkpoints of one row each, each followed by the compaction `offshoot checkpoint` runs after it reports. */
  const write = async (round: string, n: number) => {
    for (let i = 0; i < n; i++) {
      runSql(co, `INSERT INTO t(v) VALUES ('${round}${i}');`);
      await checkpoint(ts.ctx, main, `${round}${i}`);
      await compactBranch(ts.ctx, main.db, main.branch);
      dumps.set(`${round}${i}`, dump(co));
    }
  };

  before(async () => {
    ts = await openS3TestStore({ snapshotEvery: 4, layout: 2 });
    await create(ts.ctx, 'app');
    co = (await checkout(ts.ctx, main)).path;
    runSql(co, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
  });
  after(async () => ts.cleanup());

  it('below layout 3 chains are bounded by snapshots and the manifest is never written', async () => {
    await write('a', 12);
    assert.deepEqual(await mergedKeys(ts), []);
    assert.equal(await layoutOnBucket(ts), 2);
  });

  it('two upgrades at once: one raises the layout, the other finds it raised; the writer then merges', async () => {
    await assertUpgradeRace(ts.spec, () => openTestS3Backend(ts.bucket.name, ts.prefix), ts.tmpPath('race'));
    assert.equal(await layoutOnBucket(ts), 3);
    assert.equal(ts.store.layoutVersion, 2, 'the writer has not read the manifest again yet');
    await write('b', 6);
    assert.ok((await mergedKeys(ts)).length > 0, 'once the writer reads the new layout it merges');
    assert.equal(ts.store.layoutVersion, 3);
    for (const [name, want] of dumps) assert.equal(await exportDump(ts, { ...main, checkpoint: name }), want, name);
  });
});
