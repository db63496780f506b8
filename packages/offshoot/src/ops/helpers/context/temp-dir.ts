import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fail } from '../../../core/errors.js';
import { processAlive } from '../../../platform/process-alive.js';
import { processSpace } from '../../../platform/process-space.js';
import type { OpsContext } from './context.js';
import { scratchDir } from './paths.js';

// Named `<pid>+<host:pidns>+<random>`: '+' appears in neither, so a leftover's owner can be read back from its name.
const OWNER = /^(\d+)\+([^+]+)\+[^+]*$/;

/**
 * Runs fn with a fresh private temp directory, removed afterwards whatever happens. It lives under the checkout
 * root, not in TMPDIR: staged snapshots are as large as the database, and belong on the disk that holds it. A
 * directory left by a killed process of this host is removed by the next call.
 */
export async function withTempDir<T>(ctx: OpsContext, fn: (dir: string) => Promise<T>): Promise<T> {
  const parent = scratchDir(ctx.checkoutRoot, 'tmp');
  let dir: string;
  try {
    await mkdir(parent, { recursive: true });
    await sweepDeadOwners(parent);
    dir = await mkdtemp(join(parent, `${process.pid}+${processSpace()}+`));
  } catch (err) {
    throw fail('IO', `cannot make a staging directory under ${parent}: ${(err as Error).message}`, {
      hint: `check that ${parent} is writable by this user`,
      cause: err,
    });
  }
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Removes files without making the caller wait for the filesystem to free their blocks (an unlink of a 1 GiB file on
 * ext4 takes seconds): each is renamed at once into a private staging directory under the checkout root, so it is gone
 * from its path when this returns, and the directory is removed in the background. Files that do not exist are
 * skipped; the result says whether any did. A process killed before the removal finished leaves the directory to the
 * next sweep of dead owners' staging.
 */
export async function removeInBackground(ctx: OpsContext, paths: readonly string[]): Promise<boolean> {
  const parent = scratchDir(ctx.checkoutRoot, 'tmp');
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, `${process.pid}+${processSpace()}+`));
  // All at once: the files are independent, and a crash already leaves any of them moved and the rest in place.
  const renamed = await Promise.allSettled(paths.map((path, i) => rename(path, join(dir, String(i)))));
  const failed = renamed.find(
    (r): r is PromiseRejectedResult => r.status === 'rejected' && (r.reason as NodeJS.ErrnoException).code !== 'ENOENT',
  );
  if (failed !== undefined) {
    await rm(dir, { recursive: true, force: true });
    throw failed.reason;
  }
  const moved = renamed.some((r) => r.status === 'fulfilled');
  void rm(dir, { recursive: true, force: true }).catch(() => undefined);
  return moved;
}

// Best effort: a leftover that cannot be removed must not fail the command that merely came across it.
async function sweepDeadOwners(parent: string): Promise<void> {
  const space = processSpace();
  const dead = (await readdir(parent)).filter((name) => {
    const m = OWNER.exec(name);
    return m !== null && m[2] === space && Number(m[1]) !== process.pid && !processAlive(Number(m[1]));
  });
  await Promise.all(
    dead.map((name) => rm(join(parent, name), { recursive: true, force: true }).catch(() => undefined)),
  );
}
