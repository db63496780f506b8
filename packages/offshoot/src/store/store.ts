import { fail, hasCode } from '../core/errors.js';
import { nameProblem } from '../core/names.js';
import { decodeLogRecords, type LogRecord } from '../core/history.js';
import {
  baseKey,
  branchLogPrefix,
  checkLineageId,
  LIVENESS_PREFIX,
  LOG_PREFIX,
  type LogObject,
  parseLogKey,
  lineagePrefix,
  MANIFEST_KEY,
  parseDataKey,
  parseRefKey,
  refKey,
  type DataObject,
} from '../core/keys.js';
import { parseRef, serializeRef, cloneRef, type BasePointer, type Ref } from '../core/ref.js';
import type { Backend, Body, GetResult, NewObject } from './backend.js';
import { sortByteOrder } from './byte-order.js';
import { createInTiers } from './group-create.js';
import {
  DEFAULT_LAYOUT_VERSION,
  encodeManifest,
  LAYOUT_VERSION,
  MIN_LAYOUT_VERSION,
  readManifest,
  SHARED_LAYOUT_VERSION,
} from './manifest.js';
import { openBackend } from './open-backend.js';
import type { StoreSpec } from './store-spec.js';

/** A ref as read, with the etag a compare-and-swap must name. */
export interface VersionedRef {
  ref: Ref;
  etag: string;
}

/** A parsed ref whose etag is asked of its read only when a caller needs it (the local store hashes the bytes for it). */
export function versionedRef(ref: Ref, read: GetResult): VersionedRef {
  return {
    ref,
    get etag() {
      return read.etag;
    },
  };
}

/**
 * What a lease holder renewing its lease in the background installs on that ref while it holds it (see
 * ops/helpers/lease/lease-renewal.ts): every write of the ref through this store passes through it, so it can refuse the
 * write once the lease is lost, let a write naming an etag only its own renewal replaced land, and keep renewals
 * from interleaving with the write. `put` does the write with the etag and ref it is given (ref undefined: a delete).
 */
export interface RefWriteGuard {
  write<T>(etag: string, ref: Ref | undefined, put: (etag: string, ref: Ref | undefined) => Promise<T>): Promise<T>;
}

/** How many times updateRef retries a lost compare-and-swap before giving up. */
const CAS_RETRIES = 8;

/** The store: manifest, refs changed only by compare-and-swap, and create-only data objects, over one backend. */
export class Store {
  private layout: number;
  private readonly guards = new Map<string, RefWriteGuard>();
  private raisingShared: Promise<unknown> | undefined;

  private constructor(
    readonly backend: Backend,
    readonly spec: StoreSpec,
    layout: number,
  ) {
    this.layout = layout;
  }

  /** Opens an initialized store, refusing a missing manifest or a layout newer than this build. */
  static async open(spec: StoreSpec, opts: { backend?: Backend; probe?: boolean } = {}): Promise<Store> {
    const backend = opts.backend ?? (await openBackend(spec, { probe: opts.probe ?? true }));
    const { manifest } = await readManifest(backend, spec.text);
    return new Store(backend, spec, manifest.layout_version);
  }

  /**
   * Creates the manifest create-only at `layout` (by default DEFAULT_LAYOUT_VERSION, the newest);
   * refuses a store that already exists, and a layout this build does not know.
   */
  static async init(spec: StoreSpec, opts: { backend?: Backend; now?: Date; layout?: number } = {}): Promise<Store> {
    const layout = opts.layout ?? DEFAULT_LAYOUT_VERSION;
    if (!Number.isInteger(layout) || layout < MIN_LAYOUT_VERSION || layout > LAYOUT_VERSION)
      throw fail(
        'INVALID_ARGUMENT',
        `layout ${layout} is not one this build writes (${MIN_LAYOUT_VERSION} to ${LAYOUT_VERSION})`,
        {
          hint: `pick a layout from ${MIN_LAYOUT_VERSION} to ${LAYOUT_VERSION}`,
        },
      );
    const backend = opts.backend ?? (await openBackend(spec, { probe: true }));
    const created_at = (opts.now ?? new Date()).toISOString();
    try {
      await backend.put(MANIFEST_KEY, encodeManifest({ layout_version: layout, created_at }), {
        ifNoneMatch: true,
      });
    } catch (err) {
      if (hasCode(err, 'ALREADY_EXISTS') || hasCode(err, 'CAS_CONFLICT')) {
        throw fail('ALREADY_EXISTS', `store ${spec.text} is already initialized`, {
          hint: 'use the existing store, or pick another -store',
        });
      }
      throw err;
    }
    return new Store(backend, spec, layout);
  }

  /** This store seen through another backend wrapping its own (an overlay holding some keys): same spec and layout. */
  through(backend: Backend): Store {
    return new Store(backend, this.spec, this.layout);
  }

  /** The layout version as last read (at open, by refreshLayout, or after a raise). */
  get layoutVersion(): number {
    return this.layout;
  }

  /**
   * Bumps the manifest to layout 2 by compare-and-swap before the first base pointer is written; one-way. The one
   * implicit raise, made by the earlier implementation too (every binary that reads layout 2 writes it the same way).
   */
  async ensureSharedLayout(): Promise<void> {
    if (this.layout >= SHARED_LAYOUT_VERSION) return;
    // One raise at a time, so a batch of concurrent first forks writes the manifest once.
    this.raisingShared ??= this.raiseLayout(SHARED_LAYOUT_VERSION).finally(() => {
      this.raisingShared = undefined;
    });
    await this.raisingShared;
  }

  /**
   * Re-reads the layout from the manifest and returns it: another process (`offshoot upgrade`) may have raised it
   * since this store was opened. A layout is never lowered, so one at the newest this build knows is not read again.
   */
  async refreshLayout(): Promise<number> {
    if (this.layout >= LAYOUT_VERSION) return this.layout;
    const { manifest } = await readManifest(this.backend, this.spec.text);
    this.layout = Math.max(this.layout, manifest.layout_version);
    return this.layout;
  }

  /**
   * Raises the manifest's layout to `version` by compare-and-swap, never lowering it: a manifest already at or past
   * it is left alone. Returns the layout the manifest had and the one it has now.
   */
  async raiseLayout(version: number): Promise<{ from: number; to: number }> {
    for (let i = 0; i < CAS_RETRIES; i++) {
      const { manifest, etag } = await readManifest(this.backend, this.spec.text);
      const from = manifest.layout_version;
      if (from >= version) {
        this.layout = Math.max(this.layout, from);
        return { from, to: from };
      }
      try {
        await this.backend.put(MANIFEST_KEY, encodeManifest({ ...manifest, layout_version: version }), {
          ifMatch: etag,
        });
        this.layout = version;
        return { from, to: version };
      } catch (err) {
        if (!hasCode(err, 'CAS_CONFLICT')) throw err;
      }
    }
    throw fail('CAS_CONFLICT', 'could not upgrade the store layout: the manifest kept changing', {
      retryable: true,
      hint: 'retry the command',
    });
  }

  /**
   * Reads a ref, or undefined when the branch does not exist. A malformed ref is CORRUPT naming the branch and its
   * key, with the way out: restore it, or remove it with `destroy --force`.
   */
  async tryGetRef(db: string, branch: string): Promise<VersionedRef | undefined> {
    const got = await this.rawRef(db, branch);
    if (got === undefined) return undefined;
    return versionedRef(this.parseBranchRef(db, branch, got.body), got);
  }

  /** Parses the stored bytes of db@branch's ref; a malformed one is CORRUPT, naming the branch and the fix. */
  parseBranchRef(db: string, branch: string, body: Uint8Array | string): Ref {
    try {
      return parseRef(body);
    } catch (err) {
      if (!hasCode(err, 'CORRUPT')) throw err;
      throw fail('CORRUPT', `ref ${db}@${branch} (${refKey(db, branch)}) ${err.message.replace(/^ref /, '')}`, {
        hint: `restore ${refKey(db, branch)} from a backup, or remove the branch with 'offshoot destroy ${db}@${branch} --force'`,
        hints: {
          agent: `ask the human to restore ${refKey(db, branch)} from a backup or remove the branch ('offshoot destroy ${db}@${branch} --force')`,
          sdk: `restore ${refKey(db, branch)} from a backup, or destroy ${db}@${branch} with force`,
        },
        cause: err,
      });
    }
  }

  /** A ref's stored bytes and etag without parsing them (how a malformed ref is salvaged or removed). */
  async rawRef(db: string, branch: string): Promise<GetResult | undefined> {
    try {
      return await this.backend.get(refKey(db, branch));
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND')) return undefined;
      throw err;
    }
  }

  /**
   * The stored bytes of many refs in one batched read, in the order given, undefined for a branch that does not exist:
   * how status and GC read every ref. Each etag is the one a compare-and-swap names (computed only if read).
   */
  rawRefs(branches: ReadonlyArray<{ db: string; branch: string }>): Promise<Array<GetResult | undefined>> {
    return this.backend.getMany(branches.map(({ db, branch }) => refKey(db, branch)));
  }

  /**
   * The stored text of many refs, as rawRefs reads them but without the etags a compare-and-swap would name: how a
   * listing that writes nothing back (status) reads every ref.
   */
  refTexts(branches: ReadonlyArray<{ db: string; branch: string }>): Promise<Array<string | undefined>> {
    const keys = branches.map(({ db, branch }) => refKey(db, branch));
    if (this.backend.getManyText !== undefined) return this.backend.getManyText(keys);
    return this.backend.getMany(keys).then((got) => got.map((g) => g?.body.toString('utf8')));
  }

  /** Reads a ref; NOT_FOUND names the branch and how to list what exists. */
  async getRef(db: string, branch: string): Promise<VersionedRef> {
    const got = await this.tryGetRef(db, branch);
    if (got === undefined) {
      // A fork is suggested only under a name a fork may take.
      const forkable = branch !== 'main' && nameProblem(branch) === undefined;
      throw fail('NOT_FOUND', `no branch ${db}@${branch}`, {
        hint:
          branch === 'main'
            ? `run 'offshoot status' to list databases and branches, or 'offshoot create ${db}'`
            : `run 'offshoot status ${db}' to list its branches${forkable ? `, or 'offshoot fork ${db} ${branch}' to make this one` : ''}`,
        hints: {
          agent:
            branch === 'main'
              ? 'offshoot_list lists the databases and their branches'
              : `offshoot_list lists the branches of ${db}${forkable ? `; offshoot_fork (new_branch: ${JSON.stringify(branch)}) makes this one` : ''}`,
        },
      });
    }
    return got;
  }

  /** Creates a ref create-only; ALREADY_EXISTS when the branch exists. */
  async createRef(db: string, branch: string, ref: Ref): Promise<string> {
    try {
      return await this.backend.put(refKey(db, branch), serializeRef(ref), { ifNoneMatch: true });
    } catch (err) {
      throw refCreateError(db, branch, err);
    }
  }

  /**
   * Creates the refs of new forks, each on a fresh lineage, as one group commit: the base pointer a ref carries is
   * written create-only as its lineage's base.json, every one visible before any of the refs, then the refs,
   * create-only; all are durable when it returns. A crash before then may leave a ref whose base.json is missing: a
   * torn fork, never reported made, which reads as one (ops/helpers/branch/torn-fork.ts). Returns the branches whose
   * refs were created; `failed` names the first branch whose base pointer or ref could not be written (refs already
   * made are left for the caller to withdraw).
   */
  async createForkRefs(
    db: string,
    forks: ReadonlyArray<{ branch: string; ref: Ref }>,
  ): Promise<{ created: string[]; failed?: { branch: string; error: unknown } }> {
    const byKey = new Map<string, string>();
    const bases: NewObject[] = [];
    const refs: NewObject[] = [];
    for (const { branch, ref } of forks) {
      if (ref.base !== undefined) {
        const key = baseKey(ref.lineage);
        byKey.set(key, branch);
        bases.push({ key, body: encodeBase(ref.base) });
      }
      const key = refKey(db, branch);
      byKey.set(key, branch);
      refs.push({ key, body: serializeRef(ref) });
    }
    if (bases.length > 0) await this.ensureSharedLayout();
    const r = await createInTiers(this.backend, bases.length > 0 ? [bases, refs] : [refs]);
    const refKeys = new Set(refs.map((o) => o.key));
    const created = r.created.filter((k) => refKeys.has(k)).map((k) => byKey.get(k) as string);
    if (r.failed === undefined) return { created };
    const branch = byKey.get(r.failed.key) as string;
    const error = refKeys.has(r.failed.key) ? refCreateError(db, branch, r.failed.error) : r.failed.error;
    return { created, failed: { branch, error } };
  }

  /** Routes every write of db@branch's ref through guard until the returned function removes it. */
  guardRef(db: string, branch: string, guard: RefWriteGuard): () => void {
    const key = refKey(db, branch);
    this.guards.set(key, guard);
    return () => {
      if (this.guards.get(key) === guard) this.guards.delete(key);
    };
  }

  /** Replaces a ref only if it is still at etag; CAS_CONFLICT otherwise. */
  casRef(db: string, branch: string, etag: string, ref: Ref): Promise<string> {
    const guard = this.guards.get(refKey(db, branch));
    if (guard === undefined) return this.putRef(db, branch, etag, ref);
    return guard.write(etag, ref, (e, r) => this.putRef(db, branch, e, r ?? ref));
  }

  private async putRef(db: string, branch: string, etag: string, ref: Ref): Promise<string> {
    try {
      return await this.backend.put(refKey(db, branch), serializeRef(ref), { ifMatch: etag });
    } catch (err) {
      if (hasCode(err, 'CAS_CONFLICT') || hasCode(err, 'NOT_FOUND')) {
        throw fail('CAS_CONFLICT', `branch ${db}@${branch} changed concurrently`, {
          retryable: true,
          hint: 'retry the command',
          cause: err,
        });
      }
      throw err;
    }
  }

  /**
   * Read-modify-write of a ref by compare-and-swap, retried on conflict. `mutate` gets a private copy and
   * returns the new ref, or undefined to leave it unchanged; it may throw to abort.
   */
  async updateRef(
    db: string,
    branch: string,
    mutate: (ref: Ref, etag: string) => Ref | undefined | Promise<Ref | undefined>,
  ): Promise<VersionedRef> {
    for (let i = 0; ; i++) {
      const cur = await this.getRef(db, branch);
      const next = await mutate(cloneRef(cur.ref), cur.etag);
      if (next === undefined) return cur;
      try {
        const etag = await this.casRef(db, branch, cur.etag, next);
        return { ref: { ...next, generation: (next.generation ?? 0) + 1 }, etag };
      } catch (err) {
        if (!hasCode(err, 'CAS_CONFLICT') || i >= CAS_RETRIES) throw err;
      }
    }
  }

  /** Deletes a ref only if it is still at etag (re-checked by read where the backend cannot delete conditionally). */
  deleteRef(db: string, branch: string, etag: string): Promise<void> {
    const guard = this.guards.get(refKey(db, branch));
    if (guard === undefined) return this.removeRef(db, branch, etag);
    return guard.write(etag, undefined, (e) => this.removeRef(db, branch, e));
  }

  private async removeRef(db: string, branch: string, etag: string): Promise<void> {
    const key = refKey(db, branch);
    if (this.backend.capabilities.conditionalDelete) {
      try {
        await this.backend.delete(key, { ifMatch: etag });
        return;
      } catch (err) {
        if (hasCode(err, 'CAS_CONFLICT') || hasCode(err, 'NOT_FOUND')) {
          throw fail('CAS_CONFLICT', `branch ${db}@${branch} changed concurrently`, {
            retryable: true,
            hint: 'retry the command',
            cause: err,
          });
        }
        throw err;
      }
    }
    const cur = await this.tryGetRef(db, branch);
    if (cur === undefined) return;
    if (cur.etag !== etag)
      throw fail('CAS_CONFLICT', `branch ${db}@${branch} changed concurrently`, {
        retryable: true,
        hint: 'retry the command',
      });
    await this.backend.delete(key);
  }

  /** Every database that has at least one ref, sorted. */
  async listDbs(): Promise<string[]> {
    const dbs = new Set<string>();
    for (const key of await this.backend.listKeys('refs/')) {
      const k = parseRefKey(key);
      if (k) dbs.add(k.db);
    }
    return [...dbs].sort();
  }

  /** Every branch of a database, sorted. */
  async listBranches(db: string): Promise<string[]> {
    const out: string[] = [];
    for (const key of await this.backend.listKeys(`refs/${db}/`)) {
      const k = parseRefKey(key);
      if (k && k.db === db) out.push(k.branch);
    }
    return out.sort();
  }

  /**
   * Every branch of a database with its ref's stored text, sorted by branch (listBranches, then refTexts), served
   * from indexFile, a local cache outside the store, where the backend can prove it current without reading the refs.
   * A database with a ref that does not parse is never indexed: its repair, however it is written, shows at once.
   */
  async branchRefTexts(db: string, indexFile: string): Promise<Array<{ branch: string; text: string }>> {
    const out: Array<{ branch: string; text: string }> = [];
    if (this.backend.listTexts === undefined) {
      const branches = (await this.listBranches(db)).map((branch) => ({ db, branch }));
      const texts = await this.refTexts(branches);
      branches.forEach(({ branch }, i) => {
        const text = texts[i];
        if (text !== undefined) out.push({ branch, text });
      });
      return out;
    }
    for (const { key, text } of await this.backend.listTexts(`refs/${db}/`, indexFile, parsesAsRef)) {
      const k = parseRefKey(key);
      if (k && k.db === db) out.push({ branch: k.branch, text });
    }
    return out.sort((a, b) => (a.branch < b.branch ? -1 : a.branch > b.branch ? 1 : 0));
  }

  /**
   * Where branchRefTexts reads from an index: every database with a directory of refs, in the order a listing of
   * refs/ gives their refs (by `<db>/`, byte order), without listing the refs. Undefined on other backends.
   */
  async indexedDbs(): Promise<string[] | undefined> {
    if (this.backend.listTexts === undefined || this.backend.listChildren === undefined) return undefined;
    const dbs = await this.backend.listChildren('refs/');
    return sortByteOrder(dbs.map((db) => `${db}/`)).map((d) => d.slice(0, -1));
  }

  /** Every (db, branch) pair in the store, sorted. */
  async listAllBranches(): Promise<Array<{ db: string; branch: string }>> {
    const out: Array<{ db: string; branch: string }> = [];
    for (const key of await this.backend.listKeys('refs/')) {
      const k = parseRefKey(key);
      if (k) out.push(k);
    }
    return out;
  }

  /** Writes a data object create-only; an existing key is left as it is and reported ALREADY_EXISTS. */
  async putData(key: string, body: Body): Promise<void> {
    await this.backend.put(key, body, { ifNoneMatch: true });
  }

  /**
   * Every LTX object of a lineage, with sizes unless `sizes` is false: then from a key listing, which on the local
   * backend reads the directories and stats nothing, so its cost follows the lineage's directories, not its objects.
   */
  async listLineage(lineage: string, opts: { sizes?: boolean } = {}): Promise<DataObject[]> {
    checkLineageId(lineage);
    const out: DataObject[] = [];
    if (opts.sizes === false) {
      for (const key of await this.backend.listKeys(lineagePrefix(lineage))) {
        const d = parseDataKey(key);
        if (d) out.push(d);
      }
      return out;
    }
    for (const o of await this.backend.list(lineagePrefix(lineage))) {
      const d = parseDataKey(o.key);
      if (d) out.push({ ...d, size: o.size });
    }
    return out;
  }

  /** The base pointer of a lineage, or undefined for a self-contained lineage. */
  async readBase(lineage: string): Promise<BasePointer | undefined> {
    try {
      return this.parseBase(lineage, (await this.backend.get(baseKey(checkLineageId(lineage)))).body);
    } catch (err) {
      if (hasCode(err, 'NOT_FOUND')) return undefined;
      throw err;
    }
  }

  /** The base pointers of many lineages in one batched read, in the order given (undefined: self-contained). */
  async readBases(lineages: readonly string[]): Promise<Array<BasePointer | undefined>> {
    const got = await this.backend.getMany(lineages.map((l) => baseKey(checkLineageId(l))));
    return got.map((g, i) => (g === undefined ? undefined : this.parseBase(lineages[i] as string, g.body)));
  }

  // A stored base pointer, checked; anything else is CORRUPT naming the lineage.
  private parseBase(lineage: string, body: Buffer): BasePointer {
    try {
      const b = JSON.parse(body.toString('utf8')) as BasePointer;
      if (typeof b.lineage !== 'string' || typeof b.txid !== 'number') throw new Error('malformed');
      return { lineage: checkLineageId(b.lineage), txid: b.txid };
    } catch (err) {
      if (err instanceof Error && !('code' in err && 'retryable' in err)) {
        throw fail('CORRUPT', `base pointer of lineage ${lineage} is malformed`, {
          hint: 'restore data/<lineage>/base.json from a backup',
        });
      }
      throw err;
    }
  }

  /** Writes a lineage's base pointer create-only (immutable once written), bumping the layout first. */
  async writeBase(lineage: string, base: BasePointer): Promise<void> {
    await this.ensureSharedLayout();
    await this.backend.put(baseKey(lineage), encodeBase(base), { ifNoneMatch: true });
  }

  /**
   * Writes a log object create-only. Its records are committed ones, so a key already there holds the same records
   * (a retried spill, or one whose compare-and-swap was lost): that is success.
   */
  async putLogObject(key: string, body: Uint8Array): Promise<void> {
    try {
      await this.backend.put(key, body, { ifNoneMatch: true });
    } catch (err) {
      if (!hasCode(err, 'ALREADY_EXISTS') && !hasCode(err, 'CAS_CONFLICT')) throw err;
    }
  }

  /** Every log object of a branch name, of every incarnation, in key order (by incarnation, then sequence). */
  async listLogObjects(db: string, branch: string): Promise<LogObject[]> {
    const out: LogObject[] = [];
    for (const key of await this.backend.listKeys(branchLogPrefix(db, branch))) {
      const o = parseLogKey(key);
      if (o !== undefined && o.db === db && o.branch === branch) out.push(o);
    }
    return out;
  }

  /** The records of log objects, read in one batch, in the order given; one that went meanwhile reads as none. */
  async readLogObjects(objects: readonly LogObject[]): Promise<LogRecord[][]> {
    const got = await this.backend.getMany(objects.map((o) => o.key));
    return got.map((g, i) => (g === undefined ? [] : decodeLogRecords(objects[i]?.key ?? '', g.body.toString('utf8'))));
  }

  /**
   * Removes what writers that died left in the store, untouched since before `before` (temp files, incomplete
   * multipart uploads): the top-level keys' and those under each of the store's prefixes. Returns how many.
   */
  async sweepAbandoned(before: Date): Promise<number> {
    const sweep = this.backend.sweepAbandoned?.bind(this.backend);
    if (sweep === undefined) return 0;
    let removed = 0;
    for (const prefix of STORE_PREFIXES) removed += await sweep(prefix, before);
    return removed;
  }

  /** Releases the backend. */
  async close(): Promise<void> {
    await this.backend.close();
  }
}

/** Where a store keeps its keys: the top level (the manifest), then one prefix per kind of object. */
const STORE_PREFIXES = ['', 'refs/', 'data/', 'gc/', LIVENESS_PREFIX, LOG_PREFIX];

/** A base pointer's stored bytes. */
// Whether a stored ref's text reads as a ref this binary understands.
function parsesAsRef(text: string): boolean {
  try {
    parseRef(text);
    return true;
  } catch {
    return false;
  }
}

function encodeBase(base: BasePointer): Buffer {
  return Buffer.from(JSON.stringify(base) + '\n');
}

/** A create-only ref write's failure in the caller's terms: a ref that is there already is the branch existing. */
function refCreateError(db: string, branch: string, err: unknown): unknown {
  if (hasCode(err, 'ALREADY_EXISTS') || hasCode(err, 'CAS_CONFLICT')) {
    return fail('ALREADY_EXISTS', `branch ${db}@${branch} already exists`, {
      hint: 'pick another name, or destroy the existing branch first',
    });
  }
  return err;
}
