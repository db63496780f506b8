// The port a live session reaches ops through, on the model of capture/sink.ts. session/ keeps the live machinery
// (capture, the flush cadence, the lease it renews and the fencing); what it does to the branch it holds goes through
// the verbs open and flush and the names below, and what those verbs need of a session in return is declared here
// (JournalCheck, LiveSource, LiveHolder), as capture declares CaptureSink for its caller to fill.
import type { Meta } from '../core/meta.js';
import type { Ref } from '../core/ref.js';
import type { Sidecar } from '../sqlite/checkout-sidecar.js';
import type { PageSums } from '../sqlite/page-sums.js';
import type { VersionedRef } from '../store/store.js';
import type { LiveChain } from './helpers/chain/live-chain.js';
import type { UnsyncedCheckout } from './helpers/checkout/unsynced-checkout.js';
import type { EpochBumpHooks } from './helpers/chain/upload-at-head.js';
import type { OpsContext } from './helpers/context/context.js';

export { headIdentity } from './helpers/branch/branch-ref.js';
export { headKind } from './helpers/chain/chain-writer.js';
export { encodeSnapshotPages } from './helpers/chain/encode-pages.js';
export type { JournalCheck } from './helpers/safety/reopen.js';

/** The branch a live session holds, as open hands it over: where its checkout is, and the chain it carries forward. */
export interface LiveBranch {
  readonly ctx: OpsContext;
  readonly db: string;
  readonly branch: string;
  /** The checkout under capture, exactly the durable head when open handed it over. */
  readonly path: string;
  /** The chain at the head, carried forward by the session's flushes and merged behind them. */
  readonly chain: LiveChain;
  /** True while the branch is an ephemeral fork its daemon holds: gone with the daemon, its checkout is never synced. */
  ephemeral(): boolean;
}

/** What open hands the session it opened. */
export interface OpenedBranch {
  live: LiveBranch;
  /** The ref the session's lease was written in: its head cannot move while the lease is the session's. */
  ref: Ref;
  /** What the caller must know: writes of an earlier session, or edits at rest, kept as an undo branch. */
  warnings: string[];
  /** The sidecars open itself placed at the path (a fresh fork's staged head): capture need not read them back. */
  written?: { sidecar: Sidecar; sums: PageSums };
  /**
   * The checkout open placed without waiting for the disk: the session settles it (in the background) and awaits
   * that before anything of its own checkpoints the checkout (see UnsyncedCheckout).
   */
  unsynced?: UnsyncedCheckout;
}

/** A head object a session encoded for a flush: the file, its kind, its size and the pages it changed. */
export interface EncodedHead {
  file: string;
  kind: 'segment' | 'snapshot';
  bytes: number;
  pages: number;
}

/**
 * What a session hands its flush: the writes it captured since the last durable head, encoded only once the flush
 * may write (the policy has let it, the checkpoint name is free). Encoded writes stay pending until settled.
 */
export interface LiveSource {
  /** True when something was captured since the last durable head. */
  readonly dirty: boolean;
  /**
   * Takes what was captured and encodes it as the head object of txid: a segment of the changed pages, or a
   * snapshot over the head's image (`headImage`, unless the source holds one of its own) where headKind picks one.
   */
  encode(txid: number, headImage: () => Promise<string>): Promise<EncodedHead>;
  /** Removes the encoded file; what it held is durable (`written`) or pending again, for the next flush. */
  settle(written: boolean): Promise<void>;
}

/**
 * What the flush verb does to each ref the session's compare-and-swap is about to write: `next` (made from the
 * committed ref `before`) with the flush's record appended to the branch log, so the record and the head it names
 * are durable at once, or neither.
 */
export type LogStamp = (before: Ref, next: Ref) => Promise<Ref>;

/**
 * The session's own side of a flush: the epoch it writes under, and the compare-and-swap of its ref that records a
 * head (its fencing: it refuses once the lease is no longer the session's), serialized with its other ref writes.
 */
export interface LiveHolder {
  /** The epoch the session writes under now (a flush that finds an orphan at it moves to a fresh one). */
  epoch(): number;
  /**
   * Records txid (under `epoch`) as the head, and the checkpoint `name` at it, after the ref `up`, each attempt's ref
   * passed through `stamp` just before its compare-and-swap; the ref written.
   */
  record(
    up: VersionedRef,
    txid: number,
    epoch: number,
    name: string | undefined,
    meta: Meta | undefined,
    stamp: LogStamp,
  ): Promise<Ref>;
  /** Hears of an epoch bump, and orders it among the session's ref writes. */
  hooks: EpochBumpHooks;
}
