import { constants, type Dirent, readFileSync, readdirSync, statSync } from 'node:fs';
import { copyFile, lstat, mkdir, open, readFile, rename, rm, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fail, hasCode, type OffshootError } from '../../core/errors.js';
import type {
  Backend,
  BackendCapabilities,
  Body,
  GetResult,
  GroupCreateResult,
  KeyText,
  NewObject,
  ObjectInfo,
  PutCondition,
} from '../backend.js';
import { fsyncPath } from '../../platform/atomic-file.js';
import { fsyncDir, openTemp, writeTemp } from './atomic-write.js';
import { forEachChunk, streamChunkFor, writeAll } from './file-chunks.js';
import { hashFile, hashHandle, sha256Hex } from './file-hash.js';
import { isMissing, notFound, storeError } from './fs-errors.js';
import { createGroup } from './group-create.js';
import { DEFAULT_LOCK_TIMINGS, withKeyLock } from './key-lock.js';
import type { LockTimings } from './key-lock.js';
import { LOCK_SUFFIX, checkKey, keyPath, keyPaths, keySegmentOf, prefixDir } from './key-path.js';
import { linkCreateOnly } from './link-create-only.js';
import { linkHandedOver } from './link-handed-over.js';
import { pruneEmptyDirs } from './prune-empty-dirs.js';
import { sweepTemps } from './sweep-temps.js';
import { readIfSmallSync, readSmallFileSync } from './small-file.js';
import { indexedTexts } from './tree-index.js';
import { walkKeys, walkObjects } from './tree-walk.js';
import { sortByteOrder } from '../byte-order.js';

/** Lock timings for a local backend; tests shorten them, the defaults match the reference (5 s, 30 s, 2 ms). */
export interface LocalBackendOptions {
  lockTimeoutMs?: number;
  lockStaleMs?: number;
  lockPollMs?: number;
}

// Deletes in deleteMany run this many at a time: enough to overlap fsyncs without flooding the fs thread pool.
const DELETE_CONCURRENCY = 16;

// getMany reads this many small files on the main thread between turns of the event loop. Through the thread pool a
// small file costs four pool round trips (open, stat, read, close), which on a loaded machine cost several times the
// reads themselves; a slice this size holds a daemon's other requests up for about a millisecond.
const READS_PER_TURN = 64;

/**
 * A read whose etag, the SHA-256 of the body, is hashed only if a caller asks for it (most readers never compare).
 * A class, not an object literal with a getter: status makes one per ref, and a literal's accessor is slow to build.
 */
class HashedOnDemand implements GetResult {
  private hashed: string | undefined;

  constructor(readonly body: Buffer) {}

  get etag(): string {
    this.hashed ??= sha256Hex(this.body);
    return this.hashed;
  }
}

/**
 * A store in a plain directory: one file per key, etag = hex SHA-256 of the content. Every write lands in a
 * `.tmp-*` file that is fsynced and renamed (or, create-only, hard-linked) into place; replacing or deleting
 * an existing key happens under that key's exclusive `<key>.lock`, which is what makes if-match a true
 * compare-and-swap across processes. The directory's filesystem must support hard links.
 */
export class LocalBackend implements Backend {
  /** The store root, as an absolute path. */
  readonly name: string;
  readonly capabilities: BackendCapabilities = { conditionalDelete: true, cheapCopy: true };
  private readonly root: string;
  private readonly timings: LockTimings;
  // The store's device, stat'd once: a handed-over file on another one is copied, not linked.
  private rootDev: number | undefined;

  constructor(root: string, opts: LocalBackendOptions = {}) {
    this.root = resolve(root);
    this.name = this.root;
    this.timings = {
      timeoutMs: opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMINGS.timeoutMs,
      staleMs: opts.lockStaleMs ?? DEFAULT_LOCK_TIMINGS.staleMs,
      pollMs: opts.lockPollMs ?? DEFAULT_LOCK_TIMINGS.pollMs,
    };
  }

  async get(key: string): Promise<GetResult> {
    // A directory (a prefix of other keys) fails EISDIR: not found. Most objects read whole (refs, base pointers,
    // tombstones) fit one synchronous read, which costs the event loop microseconds where readFile costs four
    // thread-pool round trips; a larger one is read off the loop.
    const file = keyPath(this.root, key);
    let body: Buffer;
    try {
      body = readIfSmallSync(file) ?? (await readFile(file));
    } catch (err) {
      throw storeError(err, key, 'read');
    }
    return new HashedOnDemand(body);
  }

  /** Each key read synchronously (see READS_PER_TURN), a slice per turn; a directory at a key is not found, as in get. */
  async getMany(keys: readonly string[]): Promise<Array<GetResult | undefined>> {
    const out: Array<GetResult | undefined> = new Array(keys.length);
    const pathOf = keyPaths(this.root);
    for (let i = 0; i < keys.length; i++) {
      if (i > 0 && i % READS_PER_TURN === 0) await nextTurn();
      const key = keys[i] as string;
      try {
        out[i] = new HashedOnDemand(readSmallFileSync(pathOf(key)));
      } catch (err) {
        const e = storeError(err, key, 'read');
        if (e.code !== 'NOT_FOUND') throw e;
      }
    }
    return out;
  }

  /**
   * getMany's bodies as text, each file in one call that opens, reads, decodes and closes it inside Node (one crossing
   * into it, where the byte read takes three and a copy), with no etag object per read.
   */
  async getManyText(keys: readonly string[]): Promise<Array<string | undefined>> {
    const out: Array<string | undefined> = new Array(keys.length);
    const pathOf = keyPaths(this.root);
    for (let i = 0; i < keys.length; i++) {
      if (i > 0 && i % READS_PER_TURN === 0) await nextTurn();
      const key = keys[i] as string;
      try {
        out[i] = readFileSync(pathOf(key), 'utf8');
      } catch (err) {
        const e = storeError(err, key, 'read');
        if (e.code !== 'NOT_FOUND') throw e;
      }
    }
    return out;
  }

  /** A stream over the version present at open time: a later rename replaces the name, not this open file. */
  async getStream(key: string): Promise<Readable> {
    const { handle, size } = await this.openObject(key);
    // Sized to the object: a stream allocates its whole read size on every read, even where the file is smaller.
    return handle.createReadStream({ highWaterMark: streamChunkFor(size) });
  }

  async getToFile(key: string, path: string): Promise<number> {
    const { handle } = await this.openObject(key);
    const dest = resolve(path);
    try {
      const tmp = await openTemp(dirname(dest));
      try {
        const size = await forEachChunk(handle, (chunk) => writeAll(tmp.handle, chunk));
        await tmp.handle.sync();
        await tmp.handle.close();
        await rename(tmp.path, dest);
        await fsyncDir(dirname(dest));
        return size;
      } catch (err) {
        await tmp.handle.close().catch(() => undefined);
        await rm(tmp.path, { force: true });
        throw err;
      }
    } catch (err) {
      throw fail('IO', `cannot write ${key} to ${dest}: ${(err as Error).message}`, {
        hint: 'check that the destination directory is writable and has free space',
        cause: err,
      });
    } finally {
      await handle.close();
    }
  }

  /** Size and etag; the etag costs a full read of the object (SHA-256), so stat is O(size). */
  async stat(key: string): Promise<ObjectInfo | undefined> {
    let opened: { handle: FileHandle; size: number };
    try {
      opened = await this.openObject(key);
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND')) return undefined;
      throw err;
    }
    const { handle, size } = opened;
    try {
      return { key, size, etag: await hashHandle(handle) };
    } finally {
      await handle.close();
    }
  }

  async put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    const file = keyPath(this.root, key);
    const ifMatch = cond !== undefined && 'ifMatch' in cond ? cond.ifMatch : undefined;
    if (ifMatch !== undefined && body instanceof Uint8Array) return this.replaceIfMatch(key, file, body, ifMatch);
    // A conditional replace of a key that is gone fails now, as delete's does, before a streamed body is copied into a
    // durable temp file for nothing.
    if (ifMatch !== undefined && (await this.gone(file))) throw casConflict(key, ifMatch, undefined);
    try {
      if (!(body instanceof Uint8Array) && body.handOver && cond !== undefined && 'ifNoneMatch' in cond) {
        this.rootDev ??= statSync(this.root).dev;
        const etag = await linkHandedOver(key, body.file, file, this.rootDev);
        if (etag !== undefined) return etag;
      }
    } catch (err) {
      throw putError(err, key, body);
    }
    let tmp;
    try {
      tmp = await writeTemp(dirname(file), body);
    } catch (err) {
      throw putError(err, key, body);
    }
    await this.commit(key, file, tmp.path, cond);
    return tmp.etag;
  }

  async delete(key: string, opts: { ifMatch?: string } = {}): Promise<void> {
    const file = keyPath(this.root, key);
    const ifMatch = opts.ifMatch;
    if (!(await this.exists(file))) {
      if (ifMatch !== undefined) throw casConflict(key, ifMatch, undefined);
      return;
    }
    let removed = false;
    try {
      await this.locked(key, file, ifMatch, async () => {
        try {
          await unlink(file);
          removed = true;
        } catch (err) {
          if (!isMissing(err)) throw err;
        }
      });
      if (removed) await fsyncDir(dirname(file));
    } catch (err) {
      throw storeError(err, key, 'write');
    }
    await pruneEmptyDirs(this.root, dirname(file));
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    keys.forEach(checkKey);
    for (let i = 0; i < keys.length; i += DELETE_CONCURRENCY) {
      await Promise.all(keys.slice(i, i + DELETE_CONCURRENCY).map((k) => this.delete(k)));
    }
  }

  /** Keys, sizes, no etags: hashing every object would make listing O(total bytes); stat a key for its etag. */
  async list(prefix: string): Promise<ObjectInfo[]> {
    const found = await walkObjects(this.root, prefixDir(this.root, prefix));
    // Byte order, as S3 lists; each key's bytes made once, not once per comparison.
    return found
      .filter((f) => f.key.startsWith(prefix))
      .map((f) => ({ key: f.key, size: f.size, bytes: Buffer.from(f.key) }))
      .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
      .map((f) => ({ key: f.key, size: f.size }));
  }

  /** Served from the index while every directory under prefix is unchanged (see tree-index.ts). */
  async listTexts(prefix: string, indexFile: string, indexable: (text: string) => boolean): Promise<KeyText[]> {
    const dir = prefixDir(this.root, prefix);
    const list = async (onDir: (dir: string) => void) => {
      const found = await walkKeys(this.root, dir, onDir);
      return sortByteOrder(found.filter((k) => k.startsWith(prefix)));
    };
    return indexedTexts(indexFile, dir, list, (keys) => this.getManyText(keys), indexable);
  }

  /** The directories under prefix's directory, by key segment: one readdir. */
  async listChildren(prefix: string): Promise<string[]> {
    let entries: Dirent[];
    try {
      entries = readdirSync(prefixDir(this.root, prefix), { withFileTypes: true });
    } catch (err) {
      if (isMissing(err)) return [];
      throw storeError(err, prefix, 'read');
    }
    const out: string[] = [];
    for (const e of entries) {
      const seg = e.isDirectory() ? keySegmentOf(e.name) : undefined;
      if (seg !== undefined) out.push(seg);
    }
    return out;
  }

  /** The keys list gives, without its stat per file. */
  async listKeys(prefix: string): Promise<string[]> {
    const found = await walkKeys(this.root, prefixDir(this.root, prefix));
    return sortByteOrder(found.filter((k) => k.startsWith(prefix)));
  }

  async copy(src: string, dst: string, cond?: { ifNoneMatch: true }): Promise<void> {
    const from = keyPath(this.root, src);
    const to = keyPath(this.root, dst);
    let tmpPath: string;
    try {
      const tmp = await openTemp(dirname(to));
      await tmp.handle.close();
      tmpPath = tmp.path;
    } catch (err) {
      throw storeError(err, dst, 'write');
    }
    try {
      // FICLONE asks for a reflink (btrfs, xfs, APFS) and silently falls back to a byte copy elsewhere.
      await copyFile(from, tmpPath, constants.COPYFILE_FICLONE);
      await fsyncPath(tmpPath);
    } catch (err) {
      await rm(tmpPath, { force: true });
      throw storeError(err, src, 'read');
    }
    await this.commit(dst, to, tmpPath, cond);
  }

  /** A group commit: each file fsynced, the tiers linked in order, then each directory they touched synced once. */
  createInTiers(tiers: readonly (readonly NewObject[])[]): Promise<GroupCreateResult> {
    return createGroup(this.root, tiers);
  }

  async sweepAbandoned(prefix: string, before: Date): Promise<number> {
    if (prefix === '') return sweepTemps(this.root, before, false);
    return sweepTemps(prefixDir(this.root, prefix), before, true);
  }

  async close(): Promise<void> {}

  /**
   * A compare-and-swap of an in-memory body (a ref, a lease). Its temp file is written and fsynced, and its directory
   * opened for the fsync that makes the rename durable, while the key is checked for, locked and hashed: none of that
   * depends on the rest. Only the rename waits for both, under the lock; the directory's fsync overlaps the lock's
   * release. A streamed body keeps put's serial order: it would hold the lock for its whole copy. Every temp file and
   * handle is gone afterwards, whatever fails.
   */
  private async replaceIfMatch(key: string, file: string, body: Uint8Array, ifMatch: string): Promise<string> {
    const dir = dirname(file);
    // No directory is made: a missing one means the key is missing, which the conditional replace refuses.
    const temp = openTemp(dir, false).catch((err: unknown) => {
      throw isMissing(err) ? casConflict(key, ifMatch, undefined) : err;
    });
    // Opened only once the temp file is in it: a directory holding a file is never pruned, so this is the directory
    // the rename lands in, not one removed and made again under the same name.
    const dirHandle = temp.then(() => open(dir, 'r'));
    const written = temp.then(async ({ handle }) => {
      await handle.writeFile(body);
      await handle.sync();
    });
    let dirSynced: Promise<void> | undefined;
    for (const p of [dirHandle, written]) p.catch(() => undefined);
    let renamed = false;
    try {
      // A key that is gone fails without its lock, as delete's does (a lease given back after its branch was destroyed).
      if (await this.gone(file)) throw casConflict(key, ifMatch, undefined);
      await this.locked(key, file, ifMatch, async () => {
        await written;
        await rename((await temp).path, file);
        renamed = true;
        dirSynced = dirHandle.then((h) => h.sync());
        dirSynced.catch(() => undefined);
      });
      await dirSynced;
      return sha256Hex(body);
    } catch (err) {
      throw storeError(err, key, 'write');
    } finally {
      await written.catch(() => undefined);
      await dirSynced?.catch(() => undefined);
      const tmp = await temp.catch(() => undefined);
      await Promise.all([tmp?.handle.close(), dirHandle.then((h) => h.close())].map((p) => p?.catch(() => undefined)));
      if (tmp !== undefined && !renamed) await rm(tmp.path, { force: true });
    }
  }

  /** Moves a fully written temp file into place under cond; the temp file is gone afterwards either way. */
  private async commit(key: string, file: string, tmpPath: string, cond: PutCondition | undefined): Promise<void> {
    // A temp file renamed into place is gone: only one linked, or never moved, is left to remove.
    let renamed = false;
    try {
      if (cond !== undefined && 'ifNoneMatch' in cond) {
        await linkCreateOnly(key, tmpPath, file);
      } else {
        await this.locked(key, file, cond?.ifMatch, async () => {
          await rename(tmpPath, file);
          renamed = true;
        });
      }
      await fsyncDir(dirname(file));
    } catch (err) {
      throw storeError(err, key, 'write');
    } finally {
      if (!renamed) await rm(tmpPath, { force: true });
    }
  }

  /** Runs change under the key's lock, after checking the object is at version ifMatch when one is given. */
  private async locked(
    key: string,
    file: string,
    ifMatch: string | undefined,
    change: () => Promise<void>,
  ): Promise<void> {
    await withKeyLock(file + LOCK_SUFFIX, this.timings, async () => {
      if (ifMatch !== undefined) await this.expectVersion(key, file, ifMatch);
      await change();
    });
  }

  /** Throws CAS_CONFLICT unless the object's current content hashes to etag. */
  private async expectVersion(key: string, file: string, etag: string): Promise<void> {
    let current: string | undefined;
    try {
      current = await hashFile(file);
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    if (current !== etag) throw casConflict(key, etag, current);
  }

  /** The object's file, open for reading, and its size. */
  private async openObject(key: string): Promise<{ handle: FileHandle; size: number }> {
    const file = keyPath(this.root, key);
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      throw storeError(err, key, 'read');
    }
    const st = await handle.stat();
    // A directory opens fine on POSIX; it is a prefix of other keys, not an object.
    if (!st.isFile()) {
      await handle.close();
      throw notFound(key);
    }
    return { handle, size: st.size };
  }

  // Nothing at all at file; anything else there (even not a regular file) is for the check under the key lock.
  private async gone(file: string): Promise<boolean> {
    try {
      await lstat(file);
      return false;
    } catch (err) {
      if (isMissing(err)) return true;
      throw err;
    }
  }

  private async exists(file: string): Promise<boolean> {
    try {
      return (await lstat(file)).isFile();
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }
}

/** A put's failure: the source file unreadable (NOT_FOUND or IO, naming it), else the store's own error for key. */
function putError(err: unknown, key: string, body: Body): OffshootError {
  const e = err as NodeJS.ErrnoException;
  if (!(body instanceof Uint8Array) && e.path === body.file) {
    return fail(isMissing(err) ? 'NOT_FOUND' : 'IO', `cannot read ${body.file} to store ${key}: ${e.message}`, {
      hint: 'check that the source file exists and is readable',
      cause: err,
    });
  }
  return storeError(err, key, 'write');
}

/** Opens (creating if needed) a local store rooted at root. */
export async function openLocalBackend(root: string, opts?: LocalBackendOptions): Promise<LocalBackend> {
  const backend = new LocalBackend(root, opts);
  await mkdir(backend.name, { recursive: true });
  return backend;
}

function casConflict(key: string, expected: string, found: string | undefined) {
  const now = found === undefined ? 'no object' : found.slice(0, 12);
  return fail('CAS_CONFLICT', `${key} is not at the expected version ${expected.slice(0, 12)} (found ${now})`, {
    retryable: false,
    hint: 'another writer changed it first; re-read the object and apply the change to its current version',
  });
}
