#!/usr/bin/env node
// node:test on Node 20 has no global setup, so a launcher is the recipe: one daemon and one seed for the run, then
// `node --test` with parallel worker processes that fork from it, then the daemon stops.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedOnce, startDaemon } from '@offshoot/client/testkit';
import { SEED_NAME, SEED_SQL } from '../fixture-seed.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const daemon = await startDaemon({ workdir: process.env.OFFSHOOT_RUNNER_WORKDIR });
let code = 1;
try {
  const seed = await seedOnce(daemon, { name: SEED_NAME, seed: SEED_SQL });
  const files = readdirSync(here)
    .filter((f) => f.endsWith('.test.mjs'))
    .map((f) => join(here, f));
  const child = spawn(process.execPath, ['--test', '--test-concurrency=2', ...files], {
    stdio: 'inherit',
    env: { ...process.env, OFFSHOOT_SOCK: daemon.sock, OFFSHOOT_SEED: JSON.stringify(seed) },
  });
  code = await new Promise((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
} finally {
  await daemon.stop();
}
process.exit(code);
