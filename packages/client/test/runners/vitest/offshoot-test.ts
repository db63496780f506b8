import { type ForkedSession, forkPerTest } from '@offshoot/client/testkit';
import { test as base, inject } from 'vitest';

const daemon = { sock: inject('offshootSock') };

/** `test` with a `fork` fixture: a private fork of the seed per test, destroyed when the test ends. */
export const test = base.extend<{ fork: ForkedSession }>({
  fork: async ({ task }, use) => {
    const fork = await forkPerTest(daemon, inject('offshootSeed'), { name: task.name });
    await use(fork);
    await fork.close();
  },
});
