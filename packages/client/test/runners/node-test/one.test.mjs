import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { forkPerTest } from '@offshoot/client/testkit';
import { exercise } from '../fixture-seed.mjs';

const daemon = { sock: process.env.OFFSHOOT_SOCK };
const seed = JSON.parse(process.env.OFFSHOOT_SEED);
let fork;
beforeEach(async (t) => {
  fork = await forkPerTest(daemon, seed, { name: t.name });
});
afterEach(() => fork.close());

for (const n of [1, 2, 3]) {
  test(`one ${n}`, () => {
    assert.equal(exercise(fork, `one-${n}`, `pid-${process.pid}`), `a,b,one-${n}`);
  });
}
