import { resolveLineageHalf } from '../core/chain.js';
import { fail } from '../core/errors.js';
import { baseKey, type DataObject, parseDataKey } from '../core/keys.js';
import type { BasePointer } from '../core/ref.js';
import type { ObjectInfo } from './backend.js';
import type { Store } from './store.js';

/** A chain resolved at one txid: its members oldest first, and the lineages and base pointers it reads through. */
export interface ResolvedChain {
  txid: number;
  members: DataObject[];
  /** Lineages from the branch's own down to the last base followed. */
  spine: string[];
  /** base.json keys along the spine that resolution followed. */
  baseKeys: string[];
}

const MAX_SPINE = 4096;

/**
 * Resolves chains through base pointers, each lineage's half wholly within its own prefix and joined at a seam
 * that must be contiguous. Listings and base pointers are cached for the resolver's life (one command).
 */
export class ChainResolver {
  private readonly listings = new Map<string, Promise<DataObject[]>>();
  private readonly bases = new Map<string, Promise<BasePointer | undefined>>();
  // Set by fromListing: the data/ keys listed once, standing in for every lineage's own listing.
  private listed: { objects: Map<string, DataObject[]>; bases: Set<string> } | undefined;

  /**
   * `sizes: false` lists lineages by key alone: members then carry no size, for a caller that needs only which objects
   * a chain holds and how they join (a fork's plan, a checkout's cache lookup, a diff), never a chain's bytes; a build
   * that reports progress states its members' sizes itself.
   */
  constructor(
    private readonly store: Store,
    private readonly opts: { sizes?: boolean } = {},
  ) {}

  /**
   * A resolver that answers every lineage's listing from one listing of data/, and reads only the base pointers that
   * listing holds. The caller must have listed after reading the refs it resolves: objects and base pointers are
   * written before the ref that reaches them, so such a listing holds all of them.
   */
  static fromListing(store: Store, listing: readonly ObjectInfo[]): ChainResolver {
    return ChainResolver.fromObjects(store, listing);
  }

  /**
   * fromListing over a key-only listing (`Backend.listKeys`): the members' sizes are not known and read as 0, so it
   * serves a caller that needs only which objects a chain holds (GC's mark), never a download.
   */
  static fromKeys(store: Store, keys: readonly string[]): ChainResolver {
    return ChainResolver.fromObjects(
      store,
      keys.map((key) => ({ key, size: 0 })),
    );
  }

  private static fromObjects(store: Store, listing: Iterable<ObjectInfo>): ChainResolver {
    const objects = new Map<string, DataObject[]>();
    const bases = new Set<string>();
    for (const o of listing) {
      const d = parseDataKey(o.key);
      if (d !== undefined) {
        let xs = objects.get(d.lineage);
        if (xs === undefined) objects.set(d.lineage, (xs = []));
        xs.push({ ...d, size: o.size });
      } else if (o.key.endsWith('/base.json')) bases.add(o.key);
    }
    const r = new ChainResolver(store);
    r.listed = { objects, bases };
    return r;
  }

  /**
   * Reads the base pointers of lineages, and of the lineages those point at down their spines, a batched read per
   * level, into the cache base() answers from: what a caller about to resolve many lineages asks first (GC's mark),
   * so it pays one batch rather than one read per lineage.
   */
  async preloadBases(lineages: Iterable<string>): Promise<void> {
    let level = [...new Set(lineages)];
    for (let depth = 0; level.length > 0 && depth < MAX_SPINE; depth++) {
      const wanted: string[] = [];
      for (const l of level) {
        if (this.bases.has(l)) continue;
        if (this.listed === undefined || this.listed.bases.has(baseKey(l))) wanted.push(l);
        else this.bases.set(l, Promise.resolve(undefined));
      }
      const read = await this.store.readBases(wanted);
      const below = new Set<string>();
      wanted.forEach((l, i) => {
        const b = read[i];
        this.bases.set(l, Promise.resolve(b));
        if (b !== undefined) below.add(b.lineage);
      });
      level = [...below];
    }
  }

  /** The lineage's LTX objects (cached). */
  objects(lineage: string): Promise<DataObject[]> {
    let p = this.listings.get(lineage);
    if (!p) {
      p = this.listed
        ? Promise.resolve(this.listed.objects.get(lineage) ?? [])
        : this.store.listLineage(lineage, this.opts);
      this.listings.set(lineage, p);
    }
    return p;
  }

  /** The lineage's base pointer (cached). */
  base(lineage: string): Promise<BasePointer | undefined> {
    let p = this.bases.get(lineage);
    if (!p) {
      p =
        this.listed && !this.listed.bases.has(baseKey(lineage))
          ? Promise.resolve(undefined)
          : this.store.readBase(lineage);
      this.bases.set(lineage, p);
    }
    return p;
  }

  /** Resolves the chain that reproduces `lineage` at `txid`. */
  async resolve(lineage: string, txid: number): Promise<ResolvedChain> {
    const members: DataObject[] = [];
    const spine: string[] = [];
    const baseKeys: string[] = [];
    let lin = lineage;
    let t = txid;
    for (;;) {
      if (spine.length >= MAX_SPINE || spine.includes(lin)) {
        throw fail('CORRUPT', `base pointers of lineage ${lineage} form a cycle or are too deep`, {
          hint: 'the store is damaged; restore it from a backup',
        });
      }
      spine.push(lin);
      const [base, objs] = await Promise.all([this.base(lin), this.objects(lin)]);
      const half = resolveLineageHalf(lin, objs, t, base);
      members.unshift(...half.members);
      if (half.continueAt === undefined || base === undefined) return { txid, members, spine, baseKeys };
      baseKeys.push(baseKey(lin));
      lin = base.lineage;
      t = half.continueAt;
    }
  }

  /**
   * The base pointer a new lineage should carry to read `lineage` at `txid`, skipping pass-through hops (lineages
   * with no objects of their own at or below txid), so repeated rollbacks keep the spine one hop deep.
   */
  async collapseBase(lineage: string, txid: number): Promise<BasePointer> {
    let lin = lineage;
    for (let hops = 0; hops < MAX_SPINE; hops++) {
      const base = await this.base(lin);
      if (base === undefined || txid > base.txid) return { lineage: lin, txid };
      lin = base.lineage;
    }
    throw fail('CORRUPT', `base pointers of lineage ${lineage} are too deep`, {
      hint: 'the store is damaged; restore it from a backup',
    });
  }
}
