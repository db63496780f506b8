import { expect } from 'vitest';
import { exercise } from '../fixture-seed.mjs';
import { test } from './offshoot-test.js';

for (const n of [1, 2, 3]) {
  test(`two ${n}`, ({ fork }) => {
    expect(exercise(fork, `two-${n}`, `pool-${process.env['VITEST_POOL_ID']}`)).toBe(`a,b,two-${n}`);
  });
}
