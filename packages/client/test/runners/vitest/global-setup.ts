import { type SeedHandle, seedOnce, startDaemon } from '@offshoot/client/testkit';
import type { TestProject } from 'vitest/node';
import { SEED_NAME, SEED_SQL } from '../fixture-seed.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    offshootSock: string;
    offshootSeed: SeedHandle;
  }
}

/** Starts the run's daemon and seeds it once; the returned teardown stops it after the last worker is done. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const daemon = await startDaemon(
    process.env['OFFSHOOT_RUNNER_WORKDIR'] ? { workdir: process.env['OFFSHOOT_RUNNER_WORKDIR'] } : {},
  );
  project.provide('offshootSock', daemon.sock);
  project.provide('offshootSeed', await seedOnce(daemon, { name: SEED_NAME, seed: SEED_SQL }));
  return () => daemon.stop();
}
