import { rename, writeFile, copyFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createReadStream, rmSync } from 'node:fs';
import { fail, hasCode } from '../../core/errors.js';
import { baseKey, branchLogPrefix, parseLogKey, refKey } from '../../core/keys.js';
import { tempPathFor } from '../../platform/atomic-file.js';
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
import { sortByteOrder } from '../byte-order.js';
import { createInTiers } from '../group-create.js';
import { heldBody, heldBytes, HeldObjects, release, type HeldObject } from './held-objects.js';

/** A durable state a held branch stands on: GC must keep the chain of `lineage` at `txid` while it is held. */
export interface HeldPin {
  lineage: string;
  txid: number;
}

/** What an overlay tells its owner of what it let go of without keeping it. */
export interface OverlayEvents {
  /** A held ref was deleted: its branch is gone. */
  refDropped?(key: string): void;
  /** Held lineages nothing reaches any more were dropped, with every object they held. */
  lineagesDropped?(lineages: readonly string[]): void;
}

/** The lineage a ref or a base pointer names, read from its bytes; undefined for anything else. */
function lineageNamed(body: Body): string | undefined {
  if (!(body instanceof Uint8Array)) return undefined;
  try {
    const l = (JSON.parse(Buffer.from(body).toString('utf8')) as { lineage?: unknown }).lineage;
    return typeof l === 'string' ? l : undefined;
  } catch {
    return undefined;
  }
}

/** The ref key of the branch whose log a `log/{db}/{branch}/...` key belongs to. */
function refOfLogKey(key: string): string | undefined {
  const o = parseLogKey(key);
  return o === undefined ? undefined : refKey(o.db, o.branch);
}

/** The log prefix of the branch a `refs/{db}/{branch}` key names. */
function logPrefixOfRef(key: string): string {
  const [db, branch] = key.slice('refs/'.length).split('/');
  return branchLogPrefix(db as string, branch as string);
}

/** The lineage of a `data/{lineage}/...` key. */
function lineageOfKey(key: string): string | undefined {
  if (!key.startsWith('data/')) return undefined;
  const end = key.indexOf('/', 5);
  return end < 0 ? undefined : key.slice(5, end);
}

function notFound(key: string): Error {
  return fail('NOT_FOUND', `no object ${key}`);
}

/**
 * A backend in front of another that holds some keys itself, in memory or unsynced scratch files, and never writes
 * them to the backend: the refs it is told to hold (an ephemeral branch's `refs/{db}/{branch}`), everything under
 * `data/{lineage}/` of the lineages it holds, and the log objects a held ref's tail spills (`log/{db}/{branch}/...`
 * written while that ref is held; earlier incarnations' objects under the same name stay the backend's). Reads, listings and compare-and-swaps of held keys are answered here;
 * every other key passes through. Holding spreads by what an object names, so nothing durable ever depends on a held
 * object: a base pointer naming a held lineage makes its own lineage held, a new ref naming a held lineage is held,
 * and a write of a durable ref naming one first keeps that lineage (and what it stands on). `keep` writes a held ref,
 * the held lineages it stands on and its held log objects to the backend, in dependency order, and lets go of them;
 * a held ref deleted takes its held log objects with it.
 */
export class OverlayBackend implements Backend {
  readonly getManyText?: Backend['getManyText'];
  readonly listTexts?: Backend['listTexts'];
  readonly listChildren?: Backend['listChildren'];
  readonly sweepAbandoned?: Backend['sweepAbandoned'];
  private readonly held: HeldObjects;
  private readonly refs = new Set<string>();
  private readonly lineages = new Set<string>();
  /** Held lineages some held ref has named: once none does, their objects are dropped. */
  private readonly named = new Set<string>();
  /** The held etag a kept ref had, and the backend's etag for the same version: a caller's CAS may name either. */
  private readonly translated = new Map<string, { from: string; to: string }>();
  private readonly keeping = new Map<string, Promise<void>>();

  constructor(
    readonly inner: Backend,
    scratch: string,
    private readonly on: OverlayEvents = {},
  ) {
    this.held = new HeldObjects(scratch);
    if (inner.getManyText !== undefined) {
      const text = inner.getManyText.bind(inner);
      this.getManyText = (keys) => this.split(keys, text, (o) => heldBytes(o).toString('utf8'));
    }
    if (inner.listTexts !== undefined) {
      const list = inner.listTexts.bind(inner);
      this.listTexts = async (prefix, indexFile, indexable) => {
        const outer = (await list(prefix, indexFile, indexable)).filter((t) => !this.isHeld(t.key));
        const mine: KeyText[] = this.heldUnder(prefix).map((key) => ({
          key,
          text: heldBytes(this.held.get(key) as HeldObject).toString('utf8'),
        }));
        return mergeSorted(outer, mine);
      };
    }
    if (inner.listChildren !== undefined) {
      const children = inner.listChildren.bind(inner);
      this.listChildren = async (prefix) => {
        const out = new Set(await children(prefix));
        for (const key of this.heldUnder(prefix)) out.add(key.slice(prefix.length).split('/')[0] as string);
        return [...out];
      };
    }
    if (inner.sweepAbandoned !== undefined) this.sweepAbandoned = inner.sweepAbandoned.bind(inner);
  }

  get name(): string {
    return this.inner.name;
  }

  get capabilities(): BackendCapabilities {
    return this.inner.capabilities;
  }

  /** Holds a ref key from now on: its writes stay here. */
  holdRef(key: string): void {
    this.refs.add(key);
  }

  /** Holds a lineage from now on (a fresh one, before anything of it is written). */
  holdLineage(lineage: string): void {
    this.lineages.add(lineage);
  }

  /** Stops holding a ref key nothing was written to (a fork that failed first). */
  unholdRef(key: string): void {
    if (this.held.get(key) === undefined) this.refs.delete(key);
  }

  /** Whether a lineage is held. */
  holdsLineage(lineage: string): boolean {
    return this.lineages.has(lineage);
  }

  /** Whether a ref key is held. */
  holdsRef(key: string): boolean {
    return this.refs.has(key);
  }

  /** Every held ref key. */
  heldRefs(): string[] {
    return [...this.refs];
  }

  /** Lets go of a lineage nothing names (a fork that failed before its ref was written): its objects go. */
  dropLineage(lineage: string): void {
    if (!this.lineages.has(lineage) || this.namedByHeldRef(lineage)) return;
    this.dropLineages([lineage]);
  }

  /**
   * The durable states the held refs stand on: for the head and each checkpoint of each held ref, the first
   * (lineage, txid) below it, down its base pointers, that is not held. A held lineage without a base pointer (its own
   * snapshot) stands on nothing.
   */
  pins(): HeldPin[] {
    const out = new Map<string, HeldPin>();
    for (const key of this.refs) {
      const o = this.held.get(key);
      if (o === undefined) continue;
      let ref: { lineage?: unknown; head_txid?: unknown; checkpoints?: Record<string, { txid?: unknown }> };
      try {
        ref = JSON.parse(heldBytes(o).toString('utf8')) as typeof ref;
      } catch {
        continue;
      }
      if (typeof ref.lineage !== 'string' || typeof ref.head_txid !== 'number') continue;
      const txids = new Set([ref.head_txid, ...Object.values(ref.checkpoints ?? {}).map((c) => c.txid)]);
      for (const txid of txids) {
        if (typeof txid !== 'number') continue;
        const pin = this.standsOn(ref.lineage, txid);
        if (pin !== undefined) out.set(`${pin.lineage}@${pin.txid}`, pin);
      }
    }
    return [...out.values()];
  }

  private standsOn(lineage: string, txid: number): HeldPin | undefined {
    let at: HeldPin = { lineage, txid };
    for (let hops = 0; this.lineages.has(at.lineage) && hops < 4096; hops++) {
      const base = this.heldBase(at.lineage);
      if (base === undefined) return undefined;
      at = { lineage: base.lineage, txid: Math.min(at.txid, base.txid) };
    }
    return at;
  }

  private heldBase(lineage: string): HeldPin | undefined {
    const o = this.held.get(baseKey(lineage));
    if (o === undefined) return undefined;
    try {
      const b = JSON.parse(heldBytes(o).toString('utf8')) as { lineage?: unknown; txid?: unknown };
      return typeof b.lineage === 'string' && typeof b.txid === 'number'
        ? { lineage: b.lineage, txid: b.txid }
        : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Writes a held ref and every held lineage it stands on to the backend (each lineage's data objects, then its base
   * pointer, the deepest lineage first; then the ref, create-only) and lets go of them: from then on they are the
   * backend's. Writes that land meanwhile are carried over before letting go. ALREADY_EXISTS when the backend has a
   * ref of that name (another process made the branch meanwhile); the ref then stays held.
   */
  keep(key: string): Promise<void> {
    let run = this.keeping.get(key);
    if (run === undefined) {
      run = this.keepRef(key).finally(() => this.keeping.delete(key));
      this.keeping.set(key, run);
    }
    return run;
  }

  private async keepRef(key: string): Promise<void> {
    let stored: string | undefined;
    for (;;) {
      if (!this.refs.has(key)) return;
      const cur = this.held.get(key);
      if (cur === undefined) throw notFound(key);
      const lineage = lineageNamed(heldBody(cur));
      if (lineage !== undefined) await this.keepLineages(lineage);
      // The log objects first: a reader of the kept ref finds every record its tail no longer holds.
      const logs = await this.copyLogObjects(key);
      try {
        stored = await this.inner.put(
          key,
          heldBody(cur),
          stored === undefined ? { ifNoneMatch: true } : { ifMatch: stored },
        );
      } catch (err) {
        // The store has a branch of that name: the fork stays held, and so do the log objects just copied. Their
        // withdrawal is best effort, the refusal being the error to report: GC collects any left, as it does the
        // lineages written before.
        if (stored === undefined && hasCode(err, 'ALREADY_EXISTS') && logs.length > 0)
          await this.inner.deleteMany(logs).catch(() => undefined);
        throw err;
      }
      // Unchanged since it was read: the backend has this version, and every object it names.
      if (this.held.get(key) === cur) {
        this.translated.set(key, { from: cur.etag, to: stored });
        this.refs.delete(key);
        this.held.delete(key);
        // Every held log object is the backend's now, a spill since the copy too.
        await this.copyLogObjects(key);
        for (const k of this.heldUnder(logPrefixOfRef(key))) this.held.delete(k);
        return;
      }
    }
  }

  // Writes the held log objects of a ref's branch to the backend (create-only; a retried keep finds what it wrote) and
  // returns the keys this call created. They stay held until the ref is kept: a keep the store refuses withdraws them.
  private async copyLogObjects(ref: string): Promise<string[]> {
    const created: string[] = [];
    for (const k of this.heldUnder(logPrefixOfRef(ref))) {
      try {
        await this.inner.put(k, heldBody(this.held.get(k) as HeldObject), { ifNoneMatch: true });
        created.push(k);
      } catch (err) {
        if (!hasCode(err, 'ALREADY_EXISTS')) throw err;
      }
    }
    return created;
  }

  // Drops the held log objects of a ref's branch (the branch is gone unkept: so is its log).
  private dropLogObjects(ref: string): void {
    for (const k of this.heldUnder(logPrefixOfRef(ref))) this.held.delete(k);
  }

  /** Keeps a held lineage and the held lineages below it, the deepest first. */
  private async keepLineages(lineage: string): Promise<void> {
    const spine: string[] = [];
    for (let l: string | undefined = lineage; l !== undefined && this.lineages.has(l); l = this.heldBase(l)?.lineage) {
      if (spine.includes(l)) break;
      spine.push(l);
    }
    for (const l of spine.reverse()) await this.keepLineage(l);
  }

  // Writes a lineage's objects, then its base pointer, until a pass finds nothing new; then lets go of it. A put that
  // lands after that finds the lineage no longer held and goes to the backend itself.
  private async keepLineage(lineage: string): Promise<void> {
    const prefix = `data/${lineage}/`;
    const base = baseKey(lineage);
    const written = new Map<string, HeldObject>();
    for (;;) {
      if (!this.lineages.has(lineage)) return;
      const fresh = this.heldUnder(prefix).filter((k) => written.get(k) !== this.held.get(k));
      const objects = fresh.filter((k) => k !== base);
      const next = objects.length > 0 ? objects : fresh;
      if (next.length === 0) {
        this.lineages.delete(lineage);
        this.named.delete(lineage);
        for (const k of this.heldUnder(prefix)) this.held.delete(k);
        return;
      }
      for (const k of next) {
        const o = this.held.get(k) as HeldObject;
        try {
          await this.inner.put(k, heldBody(o), { ifNoneMatch: true });
        } catch (err) {
          // A keep retried after a failure finds what it wrote then.
          if (!hasCode(err, 'ALREADY_EXISTS')) throw err;
        }
        written.set(k, o);
      }
    }
  }

  // The held lineages no held ref reaches any more (a branch destroyed, a rollback's older lineage once its undo point
  // goes too) drop their objects. Only lineages a ref once named: one being written for a ref not yet there stays.
  private collect(): void {
    const reached = new Set<string>();
    for (const key of this.refs) {
      const o = this.held.get(key);
      let l = o === undefined ? undefined : lineageNamed(heldBody(o));
      while (l !== undefined && this.lineages.has(l) && !reached.has(l)) {
        reached.add(l);
        l = this.heldBase(l)?.lineage;
      }
    }
    this.dropLineages([...this.named].filter((l) => !reached.has(l)));
  }

  private dropLineages(lineages: readonly string[]): void {
    for (const l of lineages) {
      this.lineages.delete(l);
      this.named.delete(l);
      for (const k of this.heldUnder(`data/${l}/`)) this.held.delete(k);
    }
    if (lineages.length > 0) this.on.lineagesDropped?.(lineages);
  }

  private namedByHeldRef(lineage: string): boolean {
    for (const key of this.refs) {
      const o = this.held.get(key);
      if (o !== undefined && lineageNamed(heldBody(o)) === lineage) return true;
    }
    return false;
  }

  // Whether a key is answered here. A log key is only when held: the name's earlier incarnations are the backend's.
  private isHeld(key: string): boolean {
    if (key.startsWith('refs/')) return this.refs.has(key);
    if (key.startsWith('log/')) return this.held.get(key) !== undefined;
    const l = lineageOfKey(key);
    return l !== undefined && this.lineages.has(l);
  }

  private heldUnder(prefix: string): string[] {
    const out: string[] = [];
    for (const k of this.held.keys()) if (k.startsWith(prefix)) out.push(k);
    return sortByteOrder(out);
  }

  /**
   * Where a write goes: `held` here; `inner` to the backend; `keep-first` to the backend once the held lineage the
   * body names is kept. Decides the spreading of holding, so it runs before any await of the write.
   */
  private route(key: string, body: Body, cond: PutCondition | undefined): 'held' | 'inner' | 'keep-first' {
    if (this.isHeld(key) || this.spillsHere(key)) return 'held';
    if (this.lineages.size === 0) return 'inner';
    const named = lineageNamed(body);
    if (named === undefined || !this.lineages.has(named)) return 'inner';
    const own = lineageOfKey(key);
    if (own !== undefined && key === baseKey(own)) {
      this.lineages.add(own);
      return 'held';
    }
    if (key.startsWith('refs/') && cond !== undefined && 'ifNoneMatch' in cond) return 'held';
    return key.startsWith('refs/') ? 'keep-first' : 'inner';
  }

  // A log object of a held ref's branch: its spill is as ephemeral as the ref.
  private spillsHere(key: string): boolean {
    if (!key.startsWith('log/') || this.refs.size === 0) return false;
    const ref = refOfLogKey(key);
    return ref !== undefined && this.refs.has(ref);
  }

  private translate(key: string, etag: string): string {
    const t = this.translated.get(key);
    return t !== undefined && t.from === etag ? t.to : etag;
  }

  private innerCond(key: string, cond: PutCondition | undefined): PutCondition | undefined {
    return cond !== undefined && 'ifMatch' in cond ? { ifMatch: this.translate(key, cond.ifMatch) } : cond;
  }

  async put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    const where = this.route(key, body, cond);
    if (where === 'inner') return this.inner.put(key, body, this.innerCond(key, cond));
    if (where === 'keep-first') {
      await this.keepLineages(lineageNamed(body) as string);
      return this.inner.put(key, body, this.innerCond(key, cond));
    }
    // A new ref naming a held lineage is held only where the backend has no branch of that name.
    if (key.startsWith('refs/') && !this.refs.has(key)) {
      if ((await this.inner.stat(key)) !== undefined) throw fail('ALREADY_EXISTS', `${key} already exists`);
      this.refs.add(key);
    }
    const o = body instanceof Uint8Array ? this.held.prepareBytes(body) : await this.held.prepareFile(body);
    if (!this.isHeld(key) && !this.spillsHere(key)) {
      // Kept while the body was being prepared: the object is the backend's now.
      release(o);
      return this.put(key, body, cond);
    }
    const cur = this.held.get(key);
    if (cond !== undefined && 'ifNoneMatch' in cond && cur !== undefined) {
      release(o);
      throw fail('ALREADY_EXISTS', `${key} already exists`);
    }
    if (cond !== undefined && 'ifMatch' in cond && cur?.etag !== cond.ifMatch) {
      release(o);
      throw fail('CAS_CONFLICT', `${key} is not at the expected version`);
    }
    this.held.set(key, o);
    if (key.startsWith('refs/')) {
      const named = lineageNamed(body);
      if (named !== undefined && this.lineages.has(named)) this.named.add(named);
      this.collect();
    }
    return o.etag;
  }

  async get(key: string): Promise<GetResult> {
    if (!this.isHeld(key)) return this.inner.get(key);
    const o = this.held.get(key);
    if (o === undefined) throw notFound(key);
    return { body: heldBytes(o), etag: o.etag };
  }

  async getStream(key: string): Promise<Readable> {
    if (!this.isHeld(key)) return this.inner.getStream(key);
    const o = this.held.get(key);
    if (o === undefined) throw notFound(key);
    return o.bytes !== undefined ? Readable.from([o.bytes]) : createReadStream(o.file as string);
  }

  async getToFile(key: string, path: string): Promise<number> {
    if (!this.isHeld(key)) return this.inner.getToFile(key, path);
    const o = this.held.get(key);
    if (o === undefined) throw notFound(key);
    const tmp = tempPathFor(path);
    try {
      if (o.bytes !== undefined) await writeFile(tmp, o.bytes);
      else await copyFile(o.file as string, tmp);
      await rename(tmp, path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    return o.size;
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    if (!this.isHeld(key)) return this.inner.stat(key);
    const o = this.held.get(key);
    return o === undefined ? undefined : { key, size: o.size, etag: o.etag };
  }

  async delete(key: string, opts?: { ifMatch?: string }): Promise<void> {
    if (!this.isHeld(key)) {
      const ifMatch = opts?.ifMatch;
      return this.inner.delete(key, ifMatch === undefined ? opts : { ifMatch: this.translate(key, ifMatch) });
    }
    const o = this.held.get(key);
    if (opts?.ifMatch !== undefined && o !== undefined && o.etag !== opts.ifMatch)
      throw fail('CAS_CONFLICT', `${key} is not at the expected version`);
    this.held.delete(key);
    if (this.refs.delete(key)) {
      this.dropLogObjects(key);
      this.collect();
      this.on.refDropped?.(key);
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    const outer: string[] = [];
    for (const k of keys) {
      if (this.isHeld(k)) await this.delete(k);
      else outer.push(k);
    }
    if (outer.length > 0) await this.inner.deleteMany(outer);
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    const outer = (await this.inner.list(prefix)).filter((o) => !this.isHeld(o.key));
    const mine = this.heldUnder(prefix).map((key) => {
      const o = this.held.get(key) as HeldObject;
      return { key, size: o.size, etag: o.etag };
    });
    return mergeSorted(outer, mine);
  }

  async listKeys(prefix: string): Promise<string[]> {
    const outer = (await this.inner.listKeys(prefix)).filter((k) => !this.isHeld(k));
    const mine = this.heldUnder(prefix);
    if (mine.length === 0) return outer;
    return sortByteOrder([...outer, ...mine]);
  }

  getMany(keys: readonly string[]): Promise<Array<GetResult | undefined>> {
    return this.split(
      keys,
      (k) => this.inner.getMany(k),
      (o) => ({ body: heldBytes(o), etag: o.etag }),
    );
  }

  // Answers held keys here and asks the backend for the rest in one batch, in the order given.
  private async split<T>(
    keys: readonly string[],
    outer: (keys: readonly string[]) => Promise<Array<T | undefined>>,
    mine: (o: HeldObject) => T,
  ): Promise<Array<T | undefined>> {
    const out: Array<T | undefined> = new Array(keys.length);
    const ask: string[] = [];
    const at: number[] = [];
    keys.forEach((k, i) => {
      if (!this.isHeld(k)) {
        ask.push(k);
        at.push(i);
        return;
      }
      const o = this.held.get(k);
      out[i] = o === undefined ? undefined : mine(o);
    });
    if (ask.length > 0) {
      const got = await outer(ask);
      for (let j = 0; j < got.length; j++) out[at[j] as number] = got[j];
    }
    return out;
  }

  async createInTiers(tiers: readonly (readonly NewObject[])[]): Promise<GroupCreateResult> {
    // A group of which nothing is held (durable forks beside held ones) is the backend's one group commit. Routing in
    // tier order holds what an earlier tier's held base pointer spreads to, as the loop below does.
    if (tiers.every((t) => t.every((o) => this.route(o.key, o.body, { ifNoneMatch: true }) !== 'held')))
      return createInTiers(this.inner, tiers);
    const created: string[] = [];
    for (const tier of tiers) {
      const outer: NewObject[] = [];
      for (const o of tier) {
        if (this.route(o.key, o.body, { ifNoneMatch: true }) !== 'held') {
          outer.push(o);
          continue;
        }
        try {
          await this.put(o.key, o.body, { ifNoneMatch: true });
        } catch (error) {
          return { created, failed: { key: o.key, error } };
        }
        created.push(o.key);
      }
      if (outer.length === 0) continue;
      const r = await createInTiers(this.inner, [outer]);
      created.push(...r.created);
      if (r.failed !== undefined) return { created, failed: r.failed };
    }
    return { created };
  }

  async copy(src: string, dst: string, cond?: { ifNoneMatch: true }): Promise<void> {
    if (!this.isHeld(src) && !this.isHeld(dst)) return this.inner.copy(src, dst, cond);
    if (this.isHeld(src)) {
      const o = this.held.get(src);
      if (o === undefined) throw notFound(src);
      await this.put(dst, heldBody(o), cond);
      return;
    }
    // A backend object copied into a held key (a materialized ephemeral fork's snapshot) comes through a file.
    const file = await this.held.scratchFile();
    try {
      await this.inner.getToFile(src, file);
      await this.put(dst, { file, handOver: true }, cond);
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** Drops everything held: from then on every key is the backend's. */
  release(): void {
    this.refs.clear();
    this.lineages.clear();
    this.named.clear();
    this.held.clear();
  }

  /** Drops everything held, then closes the backend. */
  async close(): Promise<void> {
    this.release();
    await this.inner.close();
  }
}

/** Two lists each sorted by key, merged in byte order. */
function mergeSorted<T extends { key: string }>(a: T[], b: T[]): T[] {
  if (b.length === 0) return a;
  const byKey = new Map<string, T>();
  for (const x of [...a, ...b]) byKey.set(x.key, x);
  return sortByteOrder([...byKey.keys()]).map((k) => byKey.get(k) as T);
}
