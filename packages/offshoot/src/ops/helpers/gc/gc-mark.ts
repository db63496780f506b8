import { hasCode } from '../../../core/errors.js';
import { baseKey, parseDataKey } from '../../../core/keys.js';
import type { Ref } from '../../../core/ref.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import type { OpsContext } from '../context/context.js';
import { prefixIds } from '../chain/materialize.js';

/** A live branch's own lineage position: objects above its head at or above its epoch may be a flush in flight. */
interface LiveHead {
  lineage: string;
  epoch: number;
  head: number;
}

// Refs are read this many at a time: on a local store each read is a file open, on S3 a round trip.
const REF_READS = 32;

type RefRead = { db: string; branch: string } & ({ ref: Ref } | { corrupt: Error } | { missing: true });

// Reads every listed ref, REF_READS at a time, in listing order; a malformed one comes back as its CORRUPT error.
async function readRefs(ctx: OpsContext, pairs: Array<{ db: string; branch: string }>): Promise<RefRead[]> {
  const out: RefRead[] = [];
  for (let i = 0; i < pairs.length; i += REF_READS) {
    const batch = pairs.slice(i, i + REF_READS).map(async ({ db, branch }): Promise<RefRead> => {
      try {
        const got = await ctx.store.tryGetRef(db, branch);
        return got ? { db, branch, ref: got.ref } : { db, branch, missing: true };
      } catch (err) {
        if (!hasCode(err, 'CORRUPT')) throw err;
        return { db, branch, corrupt: err };
      }
    });
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

/** The reachable set: every object some live branch's chain resolves through, plus the base pointers on spines. */
export interface Mark {
  live: Set<string>;
  heads: LiveHead[];
  /** The live heads by lineage, so `keeps` costs one lookup per object rather than one scan of every head. */
  headsByLineage: Map<string, LiveHead[]>;
  /** Every readable ref as the mark read it, so a report built on the mark reads no ref twice. */
  refs: Array<{ db: string; branch: string; ref: Ref }>;
  /** The read-only cache id of every prefix of every live chain: the cache entries a live chain can use. */
  chainIds: Set<string>;
  /** `db@branch@checkpoint` of every checkpoint of every readable ref: the named read-only checkouts still wanted. */
  checkpoints: Set<string>;
  /** Lineages kept whole: those a malformed ref mentions, and the spines below them. */
  wholeLineages: Set<string>;
  /** A malformed ref no longer names its lineage: nothing can be proven garbage, so nothing is. */
  blind: boolean;
  /** The error of each ref that could not be read (it names the branch). */
  unreadable: string[];
}

// A lineage id anywhere in the bytes of a malformed ref: what it may still reach, kept rather than guessed at.
const LINEAGE_IN_TEXT = /[0-9a-f]{32}/g;

/**
 * Marks the union, over every branch, of its chain at head and at every checkpoint — resolved by the same
 * ChainResolver the read path uses — plus every base.json along its base spine. Any failure throws: an incomplete
 * mark must delete nothing.
 */
export async function markLive(ctx: OpsContext, resolver = new ChainResolver(ctx.store)): Promise<Mark> {
  const live = new Set<string>();
  const heads: LiveHead[] = [];
  const chainIds = new Set<string>();
  const mark: Mark = {
    live,
    heads,
    headsByLineage: new Map(),
    refs: [],
    chainIds,
    checkpoints: new Set(),
    wholeLineages: new Set(),
    blind: false,
    unreadable: [],
  };
  for (const read of await readRefs(ctx, await ctx.store.listAllBranches())) {
    const { db, branch } = read;
    if ('corrupt' in read) {
      mark.unreadable.push(read.corrupt.message);
      await keepWhatItMayReach(resolver, mark, (await ctx.store.rawRef(db, branch))?.body);
      continue;
    }
    if (!('ref' in read)) continue;
    const r = read.ref;
    mark.refs.push({ db, branch, ref: r });
    const head = { lineage: r.lineage, epoch: r.epoch, head: r.head_txid };
    heads.push(head);
    const same = mark.headsByLineage.get(r.lineage);
    if (same) same.push(head);
    else mark.headsByLineage.set(r.lineage, [head]);
    for (const name of Object.keys(r.checkpoints)) mark.checkpoints.add(`${db}@${branch}@${name}`);
    const txids = new Set([r.head_txid, ...Object.values(r.checkpoints).map((c) => c.txid)]);
    for (const txid of txids) {
      const chain = await resolver.resolve(r.lineage, txid);
      for (const m of chain.members) live.add(m.key);
      for (const id of prefixIds(chain.members)) chainIds.add(id);
      for (const k of chain.baseKeys) live.add(k);
    }
    for (let lin: string | undefined = r.lineage, hops = 0; lin !== undefined && hops < 4096; hops++) {
      const base = await resolver.base(lin);
      if (base === undefined) break;
      live.add(baseKey(lin));
      lin = base.lineage;
    }
  }
  return mark;
}

// The ref's own lineage when its bytes are still a JSON object naming one; undefined for garbage or a truncated ref.
function ownLineage(body: Buffer | undefined): string | undefined {
  try {
    const lineage = (JSON.parse(body?.toString('utf8') ?? '') as { lineage?: unknown }).lineage;
    return typeof lineage === 'string' && /^[0-9a-f]{32}$/.test(lineage) ? lineage : undefined;
  } catch {
    return undefined;
  }
}

// Fails closed for a ref that cannot be parsed: when it still names its own lineage, every lineage its bytes mention
// is kept whole, with every lineage on the base spines below; otherwise (garbage, a truncated write) the mark is
// blind and the pass deletes nothing.
async function keepWhatItMayReach(resolver: ChainResolver, mark: Mark, body: Buffer | undefined): Promise<void> {
  const own = ownLineage(body);
  if (own === undefined) {
    mark.blind = true;
    return;
  }
  const found = [...new Set([own, ...(body?.toString('latin1').match(LINEAGE_IN_TEXT) ?? [])])];
  for (const start of found) {
    for (let lin: string | undefined = start, hops = 0; lin !== undefined && hops < 4096; hops++) {
      if (mark.wholeLineages.has(lin)) break;
      mark.wholeLineages.add(lin);
      lin = (await resolver.base(lin))?.lineage;
    }
  }
}

/**
 * True when GC must keep key under this mark: reachable, in a lineage kept whole, or above a live head in that head's
 * lineage at epoch ≥ its; every key under a blind mark.
 */
export function keeps(mark: Mark, key: string): boolean {
  if (mark.blind || mark.live.has(key)) return true;
  const lineage = /^data\/([^/]+)\//.exec(key)?.[1];
  if (lineage !== undefined && mark.wholeLineages.has(lineage)) return true;
  const d = parseDataKey(key);
  if (d === undefined) return false;
  return (mark.headsByLineage.get(d.lineage) ?? []).some((h) => d.epoch >= h.epoch && d.maxTxid > h.head);
}
