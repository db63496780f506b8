import { mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { inBatches } from '../../core/in-batches.js';
import type { GroupCreateResult, NewObject } from '../backend.js';
import { fsyncDir, writeTemp } from './atomic-write.js';
import { isMissing, storeError } from './fs-errors.js';
import { keyPath } from './key-path.js';
import { linkCreateOnly } from './link-create-only.js';

// Files written, linked or synced at once: enough to keep the fs thread pool busy without flooding it.
const CONCURRENCY = 32;

interface Planned {
  key: string;
  file: string;
  body: Uint8Array;
  tmp?: string;
}

/** Stops a stage at its first failure, remembering which key it was. */
class ItemFailure extends Error {
  constructor(
    readonly key: string,
    readonly error: unknown,
  ) {
    super('group create failed');
  }
}

/**
 * Creates the directories the objects live in and returns the directories whose entries the creation changed (the
 * parent of each new directory): they are synced with the directories the objects are linked into.
 */
async function makeDirs(objects: readonly Planned[]): Promise<Set<string>> {
  const made = new Set<string>();
  const changed = new Set<string>();
  await inBatches(objects, CONCURRENCY, async (p) => {
    const dir = dirname(p.file);
    if (made.has(dir)) return;
    made.add(dir);
    let top: string | undefined;
    try {
      top = await mkdir(dir, { recursive: true });
    } catch (err) {
      throw new ItemFailure(p.key, storeError(err, p.key, 'write'));
    }
    if (top === undefined) return;
    for (let d = dir; d !== top; d = dirname(d)) changed.add(dirname(d));
    changed.add(dirname(top));
  });
  return changed;
}

/** Links one tier's temp files into place; adds what it linked to `linked`, returns the first failure (all tried). */
async function linkTier(tier: readonly Planned[], linked: Planned[]): Promise<ItemFailure | undefined> {
  let failure: ItemFailure | undefined;
  await inBatches(tier, CONCURRENCY, async (p) => {
    try {
      await linkCreateOnly(p.key, p.tmp as string, p.file);
      linked.push(p);
    } catch (err) {
      failure ??= new ItemFailure(p.key, storeError(err, p.key, 'write'));
    }
  });
  return failure;
}

/** Syncs each directory once, all at once; a failure is reported against an object linked into it. */
async function syncDirs(dirs: ReadonlySet<string>, linked: readonly Planned[]): Promise<void> {
  await inBatches([...dirs], CONCURRENCY, async (dir) => {
    try {
      await fsyncDir(dir);
    } catch (err) {
      const key = linked.find((p) => dirname(p.file) === dir)?.key ?? linked[0]?.key ?? dir;
      throw new ItemFailure(key, storeError(err, key, 'write'));
    }
  });
}

/**
 * The local backend's group create. Every object's temp file is written and fsynced first, all tiers at once (a temp
 * file is invisible, so its content may be made durable in any order); then the tiers are linked into place
 * create-only, in order, each once the one before it is wholly linked (so a reader never sees an object before those
 * of earlier tiers); then every directory an object was linked into, or a new directory was made in, is synced once,
 * all together. So a fork's base pointer and ref cost one round of directory syncs, not one per tier, and a thousand
 * objects in one directory one sync, not a thousand. The price is that durability is not ordered by tier: a crash
 * during the syncs may keep a later tier's entry and lose an earlier one's, which the caller reads as an unfinished
 * group (a torn fork); nothing is reported created before every sync is done. A temp file that cannot be written
 * stops the call before anything is linked; a failed link stops later tiers, and what was linked is still synced;
 * temp files are removed either way.
 */
export async function createGroup(root: string, tiers: readonly (readonly NewObject[])[]): Promise<GroupCreateResult> {
  const planned = tiers.map((t) => t.map((o): Planned => ({ key: o.key, file: keyPath(root, o.key), body: o.body })));
  const created: string[] = [];
  try {
    const newEntries = await makeDirs(planned.flat());
    await inBatches(planned.flat(), CONCURRENCY, async (p) => {
      try {
        p.tmp = (await writeTemp(dirname(p.file), p.body)).path;
      } catch (err) {
        throw new ItemFailure(p.key, storeError(err, p.key, 'write'));
      }
    });
    const linked: Planned[] = [];
    let failure: ItemFailure | undefined;
    for (const tier of planned) {
      failure = await linkTier(tier, linked);
      if (failure !== undefined) break;
    }
    created.push(...linked.map((p) => p.key));
    await syncDirs(new Set([...newEntries, ...linked.map((p) => dirname(p.file))]), linked);
    if (failure !== undefined) return { created, failed: { key: failure.key, error: failure.error } };
    return { created };
  } catch (err) {
    if (!(err instanceof ItemFailure)) throw err;
    return { created, failed: { key: err.key, error: err.error } };
  } finally {
    await inBatches(planned.flat(), CONCURRENCY, async (p) => {
      // One unlink, not rm's stat and unlink; a temp file already gone is what we want.
      if (p.tmp !== undefined) await unlink(p.tmp).catch((err: unknown) => ignoreMissing(err));
    });
  }
}

function ignoreMissing(err: unknown): void {
  if (!isMissing(err)) throw err;
}
