import { inBatches } from '../../../core/in-batches.js';
import { baseKey, parseDataKey } from '../../../core/keys.js';
import { mayBeTornFork } from '../branch/torn-fork.js';
import type { ObjectInfo } from '../../../store/backend.js';
import type { VersionedRef } from '../../../store/store.js';
import { ChainResolver } from '../../../store/chain-resolver.js';
import type { OpsContext } from '../context/context.js';
import { prefixIds } from '../chain/materialize.js';
import { readLivenessPins } from './liveness-pins.js';
import { GC_CONCURRENCY, readRefSnapshot, type SnapshotRef } from './ref-snapshot.js';
import { type HistoryMark, markHistory } from './history-mark.js';
import { LOG_PREFIX } from '../../../core/keys.js';

/** A live branch's own lineage position: objects above its head at or above its epoch may be a flush in flight. */
interface LiveHead {
  lineage: string;
  epoch: number;
  head: number;
}

/** The reachable set: every object some live branch's chain resolves through, plus the base pointers on spines. */
export interface Mark {
  live: Set<string>;
  /** Each lineage's live heads. */
  heads: Map<string, LiveHead[]>;
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
  /** Every data/ and log/ key listed once the refs were read (what the chains were resolved against). */
  present: Set<string>;
  /** What the branch logs keep: the window's chains and the log objects (see markHistory). */
  history: HistoryMark;
}

// A lineage id anywhere in the bytes of a malformed ref: what it may still reach, kept rather than guessed at.
const LINEAGE_IN_TEXT = /[0-9a-f]{32}/g;

/** A listing of data/ taken after `refs` were read, with the resolver built on it: a caller that has both shares them. */
export interface MarkListing {
  listing: readonly ObjectInfo[];
  resolver: ChainResolver;
}

/**
 * Marks the union, over every branch, of its chain at head and at every checkpoint — resolved by the same
 * ChainResolver the read path uses — plus every base.json along its base spine, and likewise the chain at every pin
 * of a fresh liveness object (the durable states a running daemon's ephemeral forks stand on; one whose chain does not
 * resolve keeps its lineages whole). The refs are `refs` when given (a
 * snapshot the pass already read), else read here; data/ is listed once after them and serves every lineage's
 * listing and which base pointers exist (or `listed`, a caller's own such listing). Each (lineage, txid) chain and each spine is walked once. Any failure
 * throws: an incomplete mark must delete nothing.
 */
export async function markLive(ctx: OpsContext, refs?: readonly SnapshotRef[], listed?: MarkListing): Promise<Mark> {
  const snapshot = refs ?? (await readRefSnapshot(ctx));
  const pins = await readLivenessPins(ctx);
  // Keys only: the mark needs which objects exist, never their sizes (a local listing would stat every one).
  const [keys, logKeys] = await Promise.all([
    listed?.listing.map((o) => o.key) ?? ctx.store.backend.listKeys('data/'),
    ctx.store.backend.listKeys(LOG_PREFIX),
  ]);
  const resolver = listed?.resolver ?? ChainResolver.fromKeys(ctx.store, keys);
  const live = new Set<string>();
  const heads = new Map<string, LiveHead[]>();
  const chainIds = new Set<string>();
  const mark: Mark = {
    live,
    heads,
    chainIds,
    checkpoints: new Set(),
    wholeLineages: new Set(),
    blind: false,
    unreadable: [],
    present: new Set([...keys, ...logKeys]),
    history: { windowKeys: new Set(), logKeys: new Set() },
  };
  const resolved = new Set<string>();
  const chains = new Set<string>();
  const spines = new Set<string>();
  const readable: Array<{ db: string; branch: string; got: VersionedRef }> = [];
  const unreadableRefs: Array<{ db: string; branch: string }> = [];
  for (const { db, branch, got, corrupt } of snapshot) {
    if (got !== undefined) readable.push({ db, branch, got });
    else {
      unreadableRefs.push({ db, branch });
      mark.unreadable.push(corrupt.message);
      await keepWhatItMayReach(resolver, mark, corrupt.body);
    }
  }
  // Every base pointer the spines below will walk, read in a batch per spine level rather than one read per lineage.
  await resolver.preloadBases(readable.map((x) => x.got.ref.lineage));
  // Branches at once; the memo entries are taken before any await, and every walk finishes before the mark returns.
  // The chain of lineage at txid, and the base pointers of the lineage's spine, each walked once.
  const markChain = async (lineage: string, txid: number): Promise<void> => {
    const at = `${lineage}@${txid}`;
    if (resolved.has(at)) return;
    resolved.add(at);
    const chain = await resolver.resolve(lineage, txid);
    for (const m of chain.members) live.add(m.key);
    // Many branches resolve to the same members (forks of one head): each distinct chain's ids are hashed once.
    const members = chain.members.map((m) => m.key).join('\n');
    if (!chains.has(members)) {
      chains.add(members);
      for (const id of prefixIds(chain.members)) chainIds.add(id);
    }
    for (const k of chain.baseKeys) live.add(k);
  };
  const markSpine = async (lineage: string): Promise<void> => {
    for (let lin: string | undefined = lineage, hops = 0; lin !== undefined && hops < 4096; hops++) {
      if (spines.has(lin)) break;
      spines.add(lin);
      const base = await resolver.base(lin);
      if (base === undefined) break;
      live.add(baseKey(lin));
      lin = base.lineage;
    }
  };
  // Lineages with anything under data/: a torn fork's has nothing (its base.json lands before its ref is visible, so
  // a fork in flight, whose ref was read before this listing, always shows its base.json here).
  const lineagesWithObjects = new Set(keys.map((k) => k.slice('data/'.length, k.indexOf('/', 'data/'.length))));
  await inBatches(readable, GC_CONCURRENCY, async ({ db, branch, got }) => {
    const r = got.ref;
    let own = heads.get(r.lineage);
    if (own === undefined) heads.set(r.lineage, (own = []));
    own.push({ lineage: r.lineage, epoch: r.epoch, head: r.head_txid });
    if (mayBeTornFork(r) && !lineagesWithObjects.has(r.lineage)) {
      // A torn fork resolves no chain; what its ref names is kept whole, so replacing or destroying it is all it asks.
      await keepWhatItMayReach(resolver, mark, Buffer.from(JSON.stringify(r)));
      return;
    }
    for (const name of Object.keys(r.checkpoints)) mark.checkpoints.add(`${db}@${branch}@${name}`);
    const txids = new Set([r.head_txid, ...Object.values(r.checkpoints).map((c) => c.txid)]);
    for (const txid of txids) await markChain(r.lineage, txid);
    await markSpine(r.lineage);
  });
  await inBatches(pins, GC_CONCURRENCY, async ({ lineage, txid }) => {
    try {
      await markChain(lineage, txid);
      await markSpine(lineage);
    } catch {
      // A pin whose chain does not resolve (its fork point was collected before the pin landed: that fork was
      // refused) proves nothing about what its lineages hold: they are kept whole, as a malformed ref's are.
      await keepWhatItMayReach(resolver, mark, Buffer.from(JSON.stringify({ lineage })));
    }
  });
  mark.history = await markHistory(
    ctx,
    { readable: readable.map(({ db, branch, got }) => ({ db, branch, ref: got.ref })), unreadable: unreadableRefs },
    logKeys,
    new Set(keys),
    resolver,
  );
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
  if (key.startsWith(LOG_PREFIX)) return mark.history.logKeys.has(key);
  if (mark.history.windowKeys.has(key)) return true;
  const lineage = /^data\/([^/]+)\//.exec(key)?.[1];
  if (lineage !== undefined && mark.wholeLineages.has(lineage)) return true;
  const d = parseDataKey(key);
  if (d === undefined) return false;
  return mark.heads.get(d.lineage)?.some((h) => d.epoch >= h.epoch && d.maxTxid > h.head) ?? false;
}
