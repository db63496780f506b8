import { afterEach, beforeEach, expect, test } from '@jest/globals';
import { forkPerTest } from '@offshoot/client/testkit';
import { exercise } from '../fixture-seed.mjs';

const daemon = { sock: process.env.OFFSHOOT_SOCK };
const seed = JSON.parse(process.env.OFFSHOOT_SEED);
let fork;
beforeEach(async () => {
  fork = await forkPerTest(daemon, seed, { name: expect.getState().currentTestName });
});
afterEach(() => fork.close());

for (const n of [1, 2, 3]) {
  test(`one ${n}`, () => {
    expect(exercise(fork, `one-${n}`, `jest-${process.env.JEST_WORKER_ID}`)).toBe(`a,b,one-${n}`);
  });
}
