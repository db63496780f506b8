import { fail } from '../../core/errors.js';
import { formatTarget, type Target } from '../../core/target.js';
import { checkFlush } from '../../ops/flush.js';
import type { Actor } from '../../ops/policy.js';
import type { DaemonContext } from '../daemon-context.js';
import type { LiveSlot } from '../session-table.js';
import { flushLive } from '../session-lifecycle.js';
import { askedBy } from './asked-by.js';

/**
 * Makes a source branch's head include everything its session here has captured (fork and promote read the head):
 * an open session is flushed first (unless the caller reads a checkpoint, not the head), as far as the safety policy
 * lets `actor` write into the source (the flush verb decides); an open still in flight is refused either way, since
 * what it will hold cannot be known yet.
 */
export async function flushSourceSession(
  d: DaemonContext,
  src: Target,
  actor: Actor,
  what: string,
  readsHead = true,
): Promise<void> {
  const slot = sourceSession(d, src, what, readsHead);
  if (slot !== undefined) await flushLive(d, slot, { kind: 'manual', actor, ...askedBy(d) });
}

/** The refusals of flushSourceSession, with nothing flushed: the open in flight, and the flush verb's own check. */
export async function checkSourceSession(
  d: DaemonContext,
  src: Target,
  actor: Actor,
  what: string,
  readsHead = true,
): Promise<void> {
  if (sourceSession(d, src, what, readsHead) !== undefined) await checkFlush(d.ops, src, actor);
}

/** The session here that a call reading the head of `src` flushes first (undefined when none, or it reads none). */
function sourceSession(d: DaemonContext, src: Target, what: string, readsHead: boolean): LiveSlot | undefined {
  const slot = d.sessions.get(src);
  if (slot === undefined) return undefined;
  if (slot.state === 'pending') {
    throw fail('SESSION_OPEN', `${what}: source ${formatTarget(src)} has a session being opened`, {
      retryable: true,
      hint: 'retry once the open has returned',
    });
  }
  return readsHead ? slot : undefined;
}
