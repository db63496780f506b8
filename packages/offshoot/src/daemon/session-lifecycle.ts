import { asOffshootError, fail } from '../core/errors.js';
import type { Meta } from '../core/meta.js';
import { formatTarget, type Target } from '../core/target.js';
import type { EventType } from '../protocol/wire.js';
import { Session, type FlushOutcome } from '../session/session.js';
import type { DaemonContext } from './daemon-context.js';
import { sessionLogLine } from './log-line.js';
import type { LiveSlot } from './session-table.js';

function onSessionEvent(d: DaemonContext, t: Target, type: EventType, detail: Record<string, unknown>): void {
  d.events.publish(type, t.db, t.branch, detail);
  d.options.log(sessionLogLine(t.db, t.branch, type, detail));
  if (type === 'flushed' || type === 'flush_failed') {
    const kind = detail.kind === 'auto' ? 'auto' : 'manual';
    d.metrics.flushed(kind, type === 'flushed', Number(detail.duration_seconds) || 0);
  }
}

/** Reserves the branch, opens a live session on it (lease, checkout, capture) and records it as open. */
export async function openSession(d: DaemonContext, t: Target): Promise<LiveSlot> {
  d.sessions.reserve(t);
  try {
    const session = await Session.open(d.sessionCtx, t, {
      ...(d.options.leaseTtlMs !== undefined ? { leaseTtlMs: d.options.leaseTtlMs } : {}),
      ...(d.options.renewEveryMs !== undefined ? { renewEveryMs: d.options.renewEveryMs } : {}),
      onEvent: (type, detail) => onSessionEvent(d, t, type, detail),
      log: (m) => d.options.log(sessionLogLine(t.db, t.branch, m)),
    });
    return d.sessions.fill(t, session);
  } catch (err) {
    d.sessions.remove(t);
    throw err;
  }
}

/** Flushes a live session, serialized with its other flushes and its close. */
export function flushLive(
  slot: LiveSlot,
  opts: { name?: string; meta?: Meta; kind: 'auto' | 'manual' },
): Promise<FlushOutcome> {
  return slot.queue.run(() => slot.session.flush(opts));
}

/**
 * Closes a live session and forgets it: pending writes are flushed first (a session with a terminal error is
 * abandoned instead). If that last flush fails the session is still closed and its lease released; the writes it
 * could not flush stay in the checkout, which then reads dirty.
 */
export async function closeLive(d: DaemonContext, slot: LiveSlot): Promise<void> {
  try {
    await slot.queue.run(() => (slot.session.error ? slot.session.abandon() : slot.session.close()));
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
