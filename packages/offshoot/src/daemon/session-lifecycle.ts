import { asOffshootError, fail } from '../core/errors.js';
import { validateName } from '../core/names.js';
import { formatTarget, type Target } from '../core/target.js';
import type { EventType } from '../protocol/wire.js';
import { daemonSessionLeaseMs } from '../ops/lease.js';
import type { Actor } from '../ops/policy.js';
import { type FlushOutcome, type FlushRequest, Session } from '../session/session.js';
import type { DaemonContext } from './daemon-context.js';
import { LIVENESS_TTL_MS } from './daemon-options.js';
import { sessionLogLine } from './log-line.js';
import type { LiveSlot } from './session-table.js';

function onSessionEvent(d: DaemonContext, t: Target, type: EventType, detail: Record<string, unknown>): void {
  d.events.publish(type, t.db, t.branch, detail);
  d.options.log(sessionLogLine(t.db, t.branch, type, detail));
  if (type === 'flushed' || type === 'flush_failed') {
    const kind = detail.kind === 'auto' ? 'auto' : 'manual';
    d.metrics.flushed(kind, type === 'flushed', Number(detail.duration_seconds) || 0);
  }
  if (type === 'session_evicted') d.metrics.sessionEvicted();
  if (type === 'contract_broken')
    d.metrics.contractBroken(detail.kind === 'journal_mode' ? 'journal_mode' : 'rollback_journal');
}

/**
 * Reserves the branch, takes a place in the open-checkout budget (evicting the coldest idle session if need be),
 * opens a live session on it (lease, checkout, capture) and records it as open.
 */
export async function openSession(d: DaemonContext, t: Target, actor: Actor): Promise<LiveSlot> {
  d.sessions.reserve(t);
  try {
    await d.budget.take();
    try {
      const session = await Session.open(d.sessionCtx, t, {
        liveness: { id: d.liveness.id, leaseMs: daemonSessionLeaseMs(d.options.leaseTtlMs ?? LIVENESS_TTL_MS) },
        onEvent: (type, detail) => onSessionEvent(d, t, type, detail),
        log: (m) => d.options.log(sessionLogLine(t.db, t.branch, m)),
        renewal: (renew) => d.renewals.run(renew),
        actor,
      });
      return d.sessions.fill(t, session);
    } catch (err) {
      d.budget.give();
      throw err;
    }
  } catch (err) {
    d.sessions.remove(t);
    throw err;
  }
}

// Runs fn on the slot's queue; once it is done, callers waiting for a place may find this session idle.
function onQueue<T>(d: DaemonContext, slot: LiveSlot, fn: () => Promise<T>): Promise<T> {
  return slot.queue.run(fn).finally(() => d.budget.wake());
}

// On the slot's queue: an evicted session whose checkout may have changed captures again, within the budget.
async function reconnectIfChanged(d: DaemonContext, slot: LiveSlot): Promise<void> {
  const s = slot.session;
  if (!s.evicted || !s.needsReconnect) return;
  await d.budget.take();
  try {
    await s.reconnect();
  } catch (err) {
    d.budget.give();
    throw err;
  }
  d.evictedWatch.remove(slot);
}

/**
 * Flushes a live session, serialized with its other flushes and its close; an evicted one reconnects first if its
 * checkout changed. A flush with a name records a durable state, so an ephemeral branch is kept first.
 */
export function flushLive(d: DaemonContext, slot: LiveSlot, opts: FlushRequest): Promise<FlushOutcome> {
  if (opts.kind === 'manual') slot.session.touch();
  if (opts.name !== undefined) validateName('checkpoint', opts.name);
  return onQueue(d, slot, async () => {
    await reconnectIfChanged(d, slot);
    if (opts.name !== undefined) await d.sessionCtx.ephemeral?.keep(slot.target);
    return slot.session.flush(opts);
  });
}

const reconnecting = new WeakSet<LiveSlot>();

/**
 * What the watch of evicted checkouts does on activity: a checkout taken out of WAL mode breaks the session's
 * contract (event, metric, typed error) at once; one that changed reconnects its session, once at a time.
 */
export function evictedCheckoutChanged(d: DaemonContext, slot: LiveSlot): void {
  const s = slot.session;
  if (slot.state !== 'open' || !s.evicted) return;
  if (s.checkEvictedContract()) {
    d.evictedWatch.remove(slot);
    return;
  }
  if (!s.needsReconnect || reconnecting.has(slot)) return;
  reconnecting.add(slot);
  onQueue(d, slot, async () => {
    if (slot.state === 'open' && !s.error) await reconnectIfChanged(d, slot);
  })
    .catch((err: unknown) =>
      d.options.log(sessionLogLine(slot.target.db, slot.target.branch, `reconnect failed: ${(err as Error).message}`)),
    )
    .finally(() => reconnecting.delete(slot));
}

/**
 * Evicts a live session to free its place in the budget: its descriptors close, its lease stays. False when it
 * could not be evicted now (its flush failed, or it is closing).
 */
export function evictLive(d: DaemonContext, slot: LiveSlot): Promise<boolean> {
  return onQueue(d, slot, async () => {
    if (slot.state !== 'open' || slot.session.evicted) return false;
    if (!(await slot.session.evict())) return false;
    d.budget.give();
    if (!slot.session.error) d.evictedWatch.add(slot);
    return true;
  });
}

/**
 * Closes a live session and forgets it: an evicted one whose checkout changed reconnects to capture it, pending
 * writes are flushed (a session with a terminal error is abandoned instead). If that last flush fails the session
 * is still closed and its lease released; the writes it could not flush stay in the checkout, which then reads
 * dirty.
 */
export async function closeLive(d: DaemonContext, slot: LiveSlot): Promise<void> {
  try {
    await onQueue(d, slot, async () => {
      // A reconnection that fails still closes the session (unflushed) and says why.
      let unreachable: unknown;
      if (!slot.session.error) await reconnectIfChanged(d, slot).catch((err: unknown) => (unreachable = err));
      d.evictedWatch.remove(slot);
      const placed = slot.session.capturing;
      try {
        const close = () => (slot.session.error || unreachable ? slot.session.abandon() : slot.session.close());
        await (placed ? d.budget.closing(close) : close());
      } finally {
        if (placed) d.budget.give();
      }
      if (unreachable) throw unreachable;
    });
  } catch (err) {
    const e = asOffshootError(err);
    const name = formatTarget(slot.target);
    throw fail(e.code, `closed ${name}, but its final flush failed: ${e.message}`, {
      hint: `its unflushed writes are still in ${slot.session.path}; keep them with 'offshoot checkpoint ${name} <name>'`,
      cause: err,
    });
  } finally {
    d.sessions.remove(slot.target);
  }
}
