import { type DaemonRef, type Seed, type SeedHandle, seedOnce, startDaemon } from '@offshoot/client/testkit';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The socket of the daemon the run's forks are made in. */
    offshootSock: string;
    /** The seeded database every data item forks. */
    offshootSeed: SeedHandle;
  }
}

/** Options of `offshootSetup`. */
export interface OffshootSetupOptions {
  /** SQL text, a `.sql` file, or an async `(dbPath) => …` that fills the database once per run. */
  seed: Seed;
  /** Names the seed; the database is `eval-<name>`. Default `default`. */
  name?: string;
  /** Extra `offshoot serve` flags for the daemon this setup starts (ignored with OFFSHOOT_SOCKET). */
  serveArgs?: string[];
}

/**
 * A Vitest global setup for evalite (name it in `vitest.config.ts` under `test.globalSetup`): it uses the daemon at
 * OFFSHOOT_SOCKET, or starts one on a temp store (OFFSHOOT_BIN, else `offshoot` on PATH), seeds the database once,
 * and hands both to every worker, where `withFork` forks the seed per data item. The daemon it started stops after
 * the last eval.
 */
export function offshootSetup(opts: OffshootSetupOptions): (project: TestProject) => Promise<() => Promise<void>> {
  return async (project) => {
    const shared = process.env['OFFSHOOT_SOCKET'];
    const daemon =
      shared !== undefined && shared !== ''
        ? { sock: shared, stop: async () => undefined }
        : await startDaemon(opts.serveArgs === undefined ? {} : { serveArgs: opts.serveArgs });
    const ref: DaemonRef = daemon;
    try {
      const seed = await seedOnce(ref, { seed: opts.seed, ...(opts.name === undefined ? {} : { name: opts.name }) });
      project.provide('offshootSock', daemon.sock);
      project.provide('offshootSeed', seed);
    } catch (err) {
      await daemon.stop();
      throw err;
    }
    return () => daemon.stop();
  };
}
