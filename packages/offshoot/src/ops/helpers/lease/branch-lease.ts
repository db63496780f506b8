import { fail, hasCode } from '../../../core/errors.js';
import { refKey } from '../../../core/keys.js';
import { type Ref, withoutLease } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import type { VersionedRef } from '../../../store/store.js';
import { leaseLive } from '../branch/branch-ref.js';
import { leaseEndText, readLiveness } from '../branch/lease-liveness.js';
import type { OpsContext } from '../context/context.js';
import { LeaseRenewal } from './lease-renewal.js';

type BranchName = Pick<Target, 'db' | 'branch'>;

/** The LEASE_HELD refusal every lease-taking path gives: it names the holder and when its lease runs out. */
export function leaseHeldError(db: string, branch: string, holder: string | undefined, expiry: string | undefined) {
  return fail('LEASE_HELD', `${db}@${branch} is leased by ${holder ?? 'unknown'} until ${expiry ?? 'unknown'}`, {
    hint: `close that session or wait for the command to finish (offshoot session close ${db}@${branch}), or wait for the lease to expire; --force never takes a live lease`,
    hints: {
      agent: `wait for that session or command to finish, or ask the human to close it (offshoot session close ${db}@${branch}); force never takes a live lease`,
      sdk: `close that session (closeSession / close_session) or wait for it to finish; force never takes a live lease`,
    },
  });
}

/**
 * Runs an at-rest mutation under the branch lease: takes it by compare-and-swap on the ref (a session that lost it
 * is fenced by the changed holder; the epoch is left alone, so the verb's objects keep their keys), runs fn, and
 * gives it back. A live lease held by anyone else — a daemon
 * session, another daemon, another command — refuses with LEASE_HELD naming the holder, forced or not. A lease this
 * context already holds (a nested call) is used as it is and left for its owner to release. A branch under a reaping
 * or destroy claim is left to fn, whose own checks refuse or (for the reaper) proceed under that claim. When fn
 * wrote nothing (it refused, or had nothing to do) the ref's exact earlier bytes are put back, so a refusal changes
 * nothing. The lease lasts ctx.leaseTtlMs and is renewed every third of that while fn runs (LeaseRenewal), so a long
 * checkpoint or compact keeps it; a command whose renewal finds the lease taken fails LEASE_LOST before it moves the
 * ref, and every verb commits by compare-and-swap against the ref it read, so an overtaken one never writes.
 *
 * With `mark`, the write that takes the lease also carries what mark makes of the ref it replaces (mark may refuse
 * by throwing, before anything is written), and fn is handed that write, ref and etag: a verb whose first write of
 * the ref would follow at once spares it. fn gets undefined when no lease was taken (see above) and must then
 * write its mark itself. Giving the lease back untouched puts the earlier bytes back, the mark with the lease.
 */
export async function withBranchLease<T>(
  ctx: OpsContext,
  t: BranchName,
  fn: (taken: VersionedRef | undefined) => Promise<T>,
  mark?: (ref: Ref) => Promise<Ref>,
): Promise<T> {
  const key = refKey(t.db, t.branch);
  let held: { original: Buffer; renewal: LeaseRenewal; taken: VersionedRef } | undefined;
  for (let attempt = 0; held === undefined; attempt++) {
    const raw = await ctx.store.backend.get(key).catch((err: unknown) => {
      if (hasCode(err, 'NOT_FOUND')) return ctx.store.getRef(t.db, t.branch).then(() => undefined);
      throw err;
    });
    if (raw === undefined) continue;
    const r = ctx.store.parseBranchRef(t.db, t.branch, raw.body);
    if (r.reaping || r.deleting) return fn(undefined);
    const now = ctx.now();
    const liveness = await readLiveness(ctx, [r]);
    if (leaseLive(r, now, liveness)) {
      if (r.lease_holder === ctx.holder) return fn(undefined);
      throw leaseHeldError(t.db, t.branch, r.lease_holder, leaseEndText(r, liveness));
    }
    const next = {
      ...(mark ? await mark(r) : r),
      lease_holder: ctx.holder,
      lease_expiry: new Date(now.getTime() + ctx.leaseTtlMs).toISOString(),
    };
    // The lease is this command's own, standing on no daemon's liveness.
    delete next.lease_liveness;
    try {
      const etag = await ctx.store.casRef(t.db, t.branch, raw.etag, next);
      const stored = { ...next, generation: (next.generation ?? 0) + 1 };
      held = {
        original: Buffer.from(raw.body),
        renewal: new LeaseRenewal(ctx, t.db, t.branch, etag, stored),
        taken: { ref: stored, etag },
      };
    } catch (err) {
      if (!hasCode(err, 'CAS_CONFLICT') || attempt >= LEASE_CAS_RETRIES) throw err;
    }
  }
  try {
    return await fn(mark ? held.taken : undefined);
  } finally {
    await giveBack(ctx, t, held);
  }
}

const LEASE_CAS_RETRIES = 8;

async function giveBack(
  ctx: OpsContext,
  t: BranchName,
  held: { original: Buffer; renewal: LeaseRenewal },
): Promise<void> {
  try {
    await held.renewal.stop();
    if (held.renewal.removed || (await giveBackAsWritten(ctx, t, held))) return;
    // Someone wrote the ref since: keep what they wrote, clearing our lease if it is still there.
    await ctx.store.updateRef(t.db, t.branch, (r) => (r.lease_holder === ctx.holder ? withoutLease(r) : undefined));
  } catch (err) {
    // A destroyed branch has no lease left to give back; any other failure leaves the lease to expire on its own.
    if (!hasCode(err, 'NOT_FOUND'))
      ctx.warn(`${t.db}@${t.branch}: could not release the lease: ${(err as Error).message}`);
  }
}

/**
 * Gives the lease back without reading the ref first: the guard knows the etag and content of this process's last
 * write. False when anyone else wrote the ref since (or it is gone), and the caller reads it to decide.
 */
async function giveBackAsWritten(
  ctx: OpsContext,
  t: BranchName,
  held: { original: Buffer; renewal: LeaseRenewal },
): Promise<boolean> {
  const etag = held.renewal.currentEtag;
  try {
    if (!held.renewal.written) {
      await ctx.store.backend.put(refKey(t.db, t.branch), held.original, { ifMatch: etag });
    } else {
      const last = held.renewal.currentRef;
      if (last.lease_holder !== ctx.holder) return false;
      await ctx.store.casRef(t.db, t.branch, etag, withoutLease(last));
    }
    return true;
  } catch (err) {
    if (hasCode(err, 'CAS_CONFLICT') || hasCode(err, 'NOT_FOUND')) return false;
    throw err;
  }
}
