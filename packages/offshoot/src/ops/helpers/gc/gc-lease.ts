import { fail, hasCode } from '../../../core/errors.js';
import { GC_LEASE_KEY } from '../../../core/keys.js';
import type { OpsContext } from '../context/context.js';
import { leaseHolderDeadHere } from '../context/lease-holder.js';

/** How long a GC pass's lease lasts between renewals (each phase boundary renews it). */
export const GC_LEASE_MS = 120_000;

interface GcLeaseBody {
  holder: string;
  expiry: string;
}

/** The lease as stored, or undefined when there is none (or it is unreadable, which counts as expired). */
async function readGcLease(ctx: OpsContext): Promise<{ body: GcLeaseBody | undefined; etag: string | undefined }> {
  try {
    const got = await ctx.store.backend.get(GC_LEASE_KEY);
    try {
      const b = JSON.parse(got.body.toString('utf8')) as GcLeaseBody;
      return { body: typeof b.holder === 'string' && typeof b.expiry === 'string' ? b : undefined, etag: got.etag };
    } catch {
      return { body: undefined, etag: got.etag };
    }
  } catch (err) {
    if (hasCode(err, 'NOT_FOUND')) return { body: undefined, etag: undefined };
    throw err;
  }
}

function casLost(err: unknown): boolean {
  return hasCode(err, 'CAS_CONFLICT') || hasCode(err, 'ALREADY_EXISTS');
}

/** A live lease of another holder; one whose holder is a gone process of this machine counts as expired. */
function heldByOther(ctx: OpsContext, body: GcLeaseBody | undefined, now: number): body is GcLeaseBody {
  if (body === undefined || body.holder === ctx.holder || leaseHolderDeadHere(body.holder)) return false;
  return Date.parse(body.expiry) > now;
}

function busy(holder: string, expiry: string) {
  return fail('BUSY', `another GC pass is running (held by ${holder} until ${expiry})`, {
    retryable: true,
    hint: 'retry once that pass has finished; only one GC pass runs store-wide at a time',
  });
}

function finishedMeanwhile(holder: string) {
  return fail('BUSY', `another GC pass is running or has just finished (it took the lease first: ${holder})`, {
    retryable: true,
    hint: 'retry if anything is left to collect; only one GC pass runs store-wide at a time',
  });
}

/**
 * The store-wide GC lease on `gc/lease`, taken and renewed by compare-and-swap with an expiry of its own. A holder
 * that dies loses it when it expires; a pass that finds its lease overtaken stops before deleting anything.
 */
export class GcLease {
  private constructor(
    private readonly ctx: OpsContext,
    private etag: string,
  ) {}

  /** Takes the lease, or fails BUSY (retryable) naming the live holder. */
  static async acquire(ctx: OpsContext): Promise<GcLease> {
    const cur = await readGcLease(ctx);
    const now = ctx.now().getTime();
    if (heldByOther(ctx, cur.body, now)) throw busy(cur.body.holder, cur.body.expiry);
    try {
      const etag = await ctx.store.backend.put(
        GC_LEASE_KEY,
        leaseBody(ctx, now + GC_LEASE_MS),
        cur.etag === undefined ? { ifNoneMatch: true } : { ifMatch: cur.etag },
      );
      return new GcLease(ctx, etag);
    } catch (err) {
      if (!casLost(err)) throw err;
      const { body } = await readGcLease(ctx);
      if (body !== undefined && body.holder !== ctx.holder) {
        const { holder, expiry } = body;
        // The pass that won the lease may already have finished and released it: it ran all the same.
        throw heldByOther(ctx, body, ctx.now().getTime()) ? busy(holder, expiry) : finishedMeanwhile(holder);
      }
      throw fail('CAS_CONFLICT', 'the GC lease changed while this pass was taking it', {
        retryable: true,
        hint: 'retry; only one GC pass runs store-wide at a time',
        cause: err,
      });
    }
  }

  /** Renews the lease; fails CAS_CONFLICT if anyone else has written it since, so the caller stops before its deletes. */
  async renew(): Promise<void> {
    try {
      this.etag = await this.ctx.store.backend.put(
        GC_LEASE_KEY,
        leaseBody(this.ctx, this.ctx.now().getTime() + GC_LEASE_MS),
        { ifMatch: this.etag },
      );
    } catch (err) {
      if (!casLost(err)) throw err;
      throw fail('CAS_CONFLICT', 'this GC pass lost its lease to another pass; it deleted nothing', {
        retryable: true,
        hint: 'retry; the pass that holds the lease does the work',
        cause: err,
      });
    }
  }

  /** Gives the lease up (written as expired) if it is still ours; a failure leaves it to expire. */
  async release(): Promise<void> {
    await this.ctx.store.backend
      .put(GC_LEASE_KEY, leaseBody(this.ctx, 0), { ifMatch: this.etag })
      .catch(() => undefined);
  }
}

function leaseBody(ctx: OpsContext, expiryMs: number): Buffer {
  const body: GcLeaseBody = { holder: ctx.holder, expiry: new Date(expiryMs).toISOString() };
  return Buffer.from(JSON.stringify(body) + '\n');
}

/** Runs one GC pass under the store-wide GC lease. */
export async function withGcLease<T>(ctx: OpsContext, fn: (lease: GcLease) => Promise<T>): Promise<T> {
  const lease = await GcLease.acquire(ctx);
  try {
    return await fn(lease);
  } finally {
    await lease.release();
  }
}
