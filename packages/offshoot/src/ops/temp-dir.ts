import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../platform/process-alive.js';
import type { OpsContext } from './context.js';

/** The hidden directory under a checkout root where offshoot stages files; no database name starts with '.'. */
export const SCRATCH_DIR = '.scratch';

// Named `<pid>+<host>+<random>`: '+' appears in neither, so a leftover's owner can be read back from its name.
const OWNER = /^(\d+)\+(.+)\+[^+]*$/;

/**
 * Runs fn with a fresh private temp directory, removed afterwards whatever happens. It lives under the checkout
 * root, not in TMPDIR: staged snapshots are as large as the database, and belong on the disk that holds it. A
 * directory left by a killed process of this host is removed by the next call.
 */
export async function withTempDir<T>(ctx: OpsContext, fn: (dir: string) => Promise<T>): Promise<T> {
  const parent = join(ctx.checkoutRoot, SCRATCH_DIR, 'tmp');
  await mkdir(parent, { recursive: true, mode: 0o700 });
  await sweepDeadOwners(parent);
  const dir = await mkdtemp(join(parent, `${process.pid}+${hostname()}+`));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Removes the temp dirs in parent whose owner was a process of this host that is gone; returns how many. */
export async function sweepDeadOwners(parent: string): Promise<number> {
  const host = hostname();
  const dead = (await readdir(parent)).filter((name) => {
    const m = OWNER.exec(name);
    return m !== null && m[2] === host && Number(m[1]) !== process.pid && !processAlive(Number(m[1]));
  });
  await Promise.all(dead.map((name) => rm(join(parent, name), { recursive: true, force: true })));
  return dead.length;
}
