import { resolveLineageHalf } from '../core/chain.js';
import { fail } from '../core/errors.js';
import { baseKey, type DataObject, parseDataKey } from '../core/keys.js';
import type { BasePointer } from '../core/ref.js';
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

  constructor(private readonly store: Store) {}

  /**
   * Seeds the caches from one listing of `data/` (a report's snapshot): each listed lineage's objects, and no base
   * pointer for a lineage listed without a base.json. Lineages the listing missed are still read on demand.
   */
  prime(listed: ReadonlyArray<{ key: string; size?: number }>): void {
    const byLineage = new Map<string, { objects: DataObject[]; hasBase: boolean }>();
    for (const o of listed) {
      const lineage = /^data\/([^/]+)\//.exec(o.key)?.[1];
      if (lineage === undefined || this.listings.has(lineage)) continue;
      let l = byLineage.get(lineage);
      if (!l) byLineage.set(lineage, (l = { objects: [], hasBase: false }));
      if (o.key === baseKey(lineage)) l.hasBase = true;
      const d = parseDataKey(o.key);
      if (d) l.objects.push({ ...d, size: o.size });
    }
    for (const [lineage, l] of byLineage) {
      this.listings.set(lineage, Promise.resolve(l.objects));
      if (!l.hasBase && !this.bases.has(lineage)) this.bases.set(lineage, Promise.resolve(undefined));
    }
  }

  /** The lineage's LTX objects (cached). */
  objects(lineage: string): Promise<DataObject[]> {
    let p = this.listings.get(lineage);
    if (!p) {
      p = this.store.listLineage(lineage);
      this.listings.set(lineage, p);
    }
    return p;
  }

  /** The lineage's base pointer (cached). */
  base(lineage: string): Promise<BasePointer | undefined> {
    let p = this.bases.get(lineage);
    if (!p) {
      p = this.store.readBase(lineage);
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
