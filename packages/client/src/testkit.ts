export {
  type ForkedSession,
  forkPerTest,
  type ForkPerTestOptions,
  type TestFork,
} from './testkit/fork-per-test.js';
export { seedOnce, type SeedHandle, type SeedOnceOptions } from './testkit/seed-once.js';
export type { Seed } from './testkit/seed-sql.js';
export { dump } from './testkit/sqlite-cli.js';
export {
  type DaemonHandle,
  type DaemonRef,
  startDaemon,
  type StartDaemonOptions,
  type TestDaemon,
} from './testkit/start-daemon.js';
