// The ops suite's seeded random histories of every at-rest verb, run against an s3:// store on the S3 test server:
// after each step every branch head and checkpoint materializes, from the bucket, to exactly the `.dump` the model
// expects. Shorter than the local runs (each step costs real requests); OFFSHOOT_S3_PROPERTY_STEPS sets the steps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoreVerifier } from '../ops/model-check.js';
import { RandomHistory, type StepKind } from '../ops/random-history.js';
import { emptyDump } from '../ops/sqlite-cli.js';
import { s3Unavailable } from '../store/s3-test-env.js';
import { openS3TestStore } from './s3-store.js';

const STEPS = Number(process.env.OFFSHOOT_S3_PROPERTY_STEPS ?? 0) || undefined;

const VERBS: readonly StepKind[] = [
  'create',
  'checkout',
  'write',
  'checkpoint',
  'forkHead',
  'forkAt',
  'rollback',
  'promote',
  'compact',
  'destroy',
  'gc',
  'touch',
];

async function runHistory(
  seed: number,
  steps: number,
  opts: { forkFloor?: number; snapshotEvery?: number; layout?: number } = {},
): Promise<void> {
  const ts = await openS3TestStore(opts);
  const h = new RandomHistory(ts, seed, emptyDump(ts.tmpPath('empty.db')));
  const verifier = new StoreVerifier(ts);
  const taken = new Set<StepKind>();
  try {
    for (let i = 0; i < steps; i++) {
      const kind = await h.step();
      taken.add(kind);
      if (kind === 'gc' || i % 10 === 9) verifier.forget();
      await verifier.verify(h.model);
    }
    // The seeds are chosen so that even a short history takes every verb; a change to the history must not lose one.
    if (STEPS === undefined)
      assert.deepEqual(
        VERBS.filter((v) => !taken.has(v)),
        [],
        'verbs the history never took',
      );
  } catch (err) {
    const tail = h.log.slice(-15).map((l, i) => `  ${h.log.length - Math.min(15, h.log.length) + i + 1}: ${l}`);
    (err as Error).message += `\nseed ${seed} on S3, ${h.log.length} steps; last steps:\n${tail.join('\n')}`;
    throw err;
  } finally {
    await ts.cleanup();
  }
}

describe('random histories on an S3 store match the model after every step', { concurrency: true }, () => {
  if (s3Unavailable('random histories on S3')) return;
  it('seed 15 (default floors)', async () => runHistory(15, STEPS ?? 60));
  it('seed 21 (forkFloor 3, snapshotEvery 3, layout 3)', async () =>
    runHistory(21, STEPS ?? 60, { forkFloor: 3, snapshotEvery: 3, layout: 3 }));
});
