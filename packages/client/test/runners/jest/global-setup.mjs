import { seedOnce, startDaemon } from '@offshoot/client/testkit';
import { SEED_NAME, SEED_SQL } from '../fixture-seed.mjs';

// Runs once in jest's parent process; workers start after it and inherit process.env.
export default async function globalSetup() {
  const workdir = process.env.OFFSHOOT_RUNNER_WORKDIR;
  const daemon = await startDaemon(workdir ? { workdir } : {});
  globalThis.offshootDaemon = daemon;
  process.env.OFFSHOOT_SOCK = daemon.sock;
  process.env.OFFSHOOT_SEED = JSON.stringify(await seedOnce(daemon, { name: SEED_NAME, seed: SEED_SQL }));
}
