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
 * Creates the directories the objects live in and returns, per tier, the directories whose entries the creation
 * changed (the parent of each new directory), so a tier can sync them before a later tier may name its objects.
 */
async function makeDirs(tiers: readonly Planned[][]): Promise<Array<Set<string>>> {
  const made = new Set<string>();
  const perTier: Array<Set<string>> = [];
  for (const tier of tiers) {
    const changed = new Set<string>();
    await inBatches(tier, CONCURRENCY, async (p) => {
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
    perTier.push(changed);
  }
  return perTier;
}

/** Links one tier's temp files into place; returns the keys created and the first failure, all links attempted. */
async function linkTier(tier: readonly Planned[], created: string[]): Promise<ItemFailure | undefined> {
  let failure: ItemFailure | undefined;
  await inBatches(tier, CONCURRENCY, async (p) => {
    try {
      await linkCreateOnly(p.key, p.tmp as string, p.file);
      created.push(p.key);
    } catch (err) {
      failure ??= new ItemFailure(p.key, storeError(err, p.key, 'write'));
    }
  });
  return failure;
}

/**
 * The local backend's group create. Every object's temp file is written and fsynced first, all tiers at once (a temp
 * file is invisible, so its content may be made durable in any order); then, tier by tier, the temp files are linked
 * into place create-only and every directory the tier linked into or created an entry in is synced once, before the
 * next tier links anything. A thousand objects in one directory thus cost one directory sync, not a thousand. A temp
 * file that cannot be written stops the call before anything is linked; temp files are removed either way.
 */
export async function createGroup(root: string, tiers: readonly (readonly NewObject[])[]): Promise<GroupCreateResult> {
  const planned = tiers.map((t) => t.map((o): Planned => ({ key: o.key, file: keyPath(root, o.key), body: o.body })));
  const created: string[] = [];
  try {
    const newEntries = await makeDirs(planned);
    await inBatches(planned.flat(), CONCURRENCY, async (p) => {
      try {
        p.tmp = (await writeTemp(dirname(p.file), p.body)).path;
      } catch (err) {
        throw new ItemFailure(p.key, storeError(err, p.key, 'write'));
      }
    });
    for (const [i, tier] of planned.entries()) {
      const failure = await linkTier(tier, created);
      const dirs = new Set([...(newEntries[i] ?? []), ...tier.map((p) => dirname(p.file))]);
      await inBatches([...dirs], CONCURRENCY, async (dir) => {
        try {
          await fsyncDir(dir);
        } catch (err) {
          const key = tier.find((p) => dirname(p.file) === dir)?.key ?? tier[0]?.key ?? dir;
          throw new ItemFailure(key, storeError(err, key, 'write'));
        }
      });
      if (failure !== undefined) return { created, failed: { key: failure.key, error: failure.error } };
    }
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
