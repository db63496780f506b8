import { fail } from '../core/errors.js';
import type { Origin } from '../core/history.js';
import type { Meta } from '../core/meta.js';
import { named } from '../core/name-map.js';
import type { Target } from '../core/target.js';
import type { VersionedRef } from '../store/store.js';
import { readBranch } from './helpers/branch/branch-ref.js';
import { type Compaction, writeHead } from './helpers/chain/chain-writer.js';
import { type OpsContext, withOrigin } from './helpers/context/context.js';
import { logged } from './helpers/history/record.js';
import { type Actor, HUMAN, vetWrite } from './helpers/safety/policy.js';
import type { LiveBranch, LiveHolder, LiveSource, LogStamp } from './live-branch.js';

/** What a flush wrote: nothing (`none`), or the head object of txid, its bytes and pages, and any merge before it. */
export interface LiveFlushed {
  txid: number;
  kind: 'segment' | 'snapshot' | 'none';
  /** Bytes of the head object the flush wrote. */
  bytes?: number;
  /** Pages the flush changed. */
  pages?: number;
  /** Bytes of the merge the flush had to write inline first, its chain being at the hard bound (rare). */
  mergedBytes?: number;
}

/** Who asks for a flush, and the checkpoint it names. */
export interface FlushOptions {
  actor?: Actor;
  /** Who asked, for the branch log's record: absent, whoever opened the session (its automatic flushes). */
  origin?: Origin;
  name?: string;
  meta?: Meta;
}

/** The flush's record in the branch log, appended to each ref the session's compare-and-swap writes. */
function flushRecord(live: LiveBranch, opts: FlushOptions, head?: { pages: number; bytes: number }): LogStamp {
  const ctx = opts.origin !== undefined ? withOrigin(live.ctx, opts.origin) : live.ctx;
  const op = opts.name !== undefined ? 'checkpoint' : 'flush';
  const detail = {
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(head !== undefined ? { pages: head.pages, bytes: head.bytes } : {}),
  };
  return (before, next) => logged(ctx, live.db, live.branch, op, before, next, detail);
}

/** The policy's rule of a flush: every write into a branch is the policy's (`human`: what the human would run). */
function vetFlush(ctx: OpsContext, t: Target, actor: Actor): ReturnType<typeof vetWrite> {
  return vetWrite(ctx, t, actor, 'explicit', `offshoot session flush ${t.db}@${t.branch}`);
}

/**
 * The refusal a flush by `actor` into the branch would answer now, by its ref as it stands, with nothing written:
 * what the check of a call that flushes a source first (a promote's) asks.
 */
export async function checkFlush(ctx: OpsContext, t: Target, actor: Actor): Promise<void> {
  if (actor.kind === 'human') return;
  await vetFlush(ctx, t, actor)((await readBranch(ctx, t.db, t.branch)).ref);
}

/**
 * `flush` (a live session's): makes what the session captured durable as the next head of the branch it leases, and
 * names it when asked. `cur` is the ref the session read under its lease: by it the policy decides first whether
 * `actor` may write into the branch (an agent never writes into the way back of a protected branch, a checkpoint name
 * alone included), and the checkpoint name must be free. The head object is uploaded create-only under the session's
 * epoch, on the chain the session carries (merged inline first when at its hard bound), and recorded by the
 * session's own write of its ref, the flush's record in the branch log appended in that same compare-and-swap. With
 * nothing captured, only the name (if any) is recorded at the current head.
 */
export async function flush(
  live: LiveBranch,
  cur: VersionedRef,
  source: LiveSource | undefined,
  holder: LiveHolder,
  opts: FlushOptions = {},
): Promise<LiveFlushed> {
  const t = { db: live.db, branch: live.branch };
  await vetFlush(live.ctx, t, opts.actor ?? HUMAN)(cur.ref);
  if (opts.name !== undefined && named(cur.ref.checkpoints, opts.name))
    throw fail('ALREADY_EXISTS', `checkpoint "${opts.name}" already exists on ${t.db}@${t.branch}`, {
      hint: 'pick another checkpoint name',
    });
  if (source === undefined || !source.dirty) {
    if (opts.name !== undefined) {
      const stamp = flushRecord(live, opts);
      await holder.record(cur, cur.ref.head_txid, cur.ref.head_epoch, opts.name, opts.meta, stamp);
    }
    return { txid: cur.ref.head_txid, kind: 'none' };
  }
  const txid = cur.ref.head_txid + 1;
  let written = false;
  try {
    const head = await source.encode(txid, () => live.chain.headImage(cur.ref));
    const snapshot = head.kind === 'snapshot';
    const room: Compaction = snapshot ? { members: [] } : await live.chain.roomAt(cur.ref, holder.epoch());
    const { object } = await writeHead(
      live.ctx,
      t.db,
      t.branch,
      cur,
      { kind: head.kind, txid, file: head.file },
      async (up) => {
        await holder.record(up, txid, holder.epoch(), opts.name, opts.meta, flushRecord(live, opts, head));
        return up;
      },
      holder.hooks,
    );
    // A background merge may have landed while the head was written: the chain carried builds on it, not on `room`.
    live.chain.advance(cur.ref, txid, object, snapshot, room.members);
    written = true;
    return {
      txid,
      kind: head.kind,
      bytes: head.bytes,
      pages: head.pages,
      ...(room.merged !== undefined ? { mergedBytes: room.merged.bytes } : {}),
    };
  } finally {
    await source.settle(written);
  }
}
