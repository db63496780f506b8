import { fail } from '../../core/errors.js';
import { formatTarget, type Target } from '../../core/target.js';
import type { Actor } from '../../ops/helpers/safety/policy.js';
import type { DaemonContext } from '../daemon-context.js';
import type { LiveSlot } from '../session-table.js';
import { flushLive } from '../session-lifecycle.js';
import { refuseAgentFlush } from './flush.js';
import { askedBy } from './asked-by.js';

/**
 * Makes a source branch's head include everything its session here has captured (fork and promote read the
 * head): an open session is flushed first (unless the caller reads a checkpoint, not the head), once the safety
 * policy lets `actor` write into the source; an open still in flight is refused either way, since what it will hold
 * cannot be known yet.
 */
export async function flushSourceSession(
  d: DaemonContext,
  src: Target,
  actor: Actor,
  what: string,
  readsHead = true,
): Promise<void> {
  const slot = await vetSourceSession(d, src, actor, what, readsHead);
  if (slot !== undefined) await flushLive(d, slot, { kind: 'manual', ...askedBy(d) });
}

/** The refusals of flushSourceSession, and the session it would flush (undefined when none). */
export async function vetSourceSession(
  d: DaemonContext,
  src: Target,
  actor: Actor,
  what: string,
  readsHead = true,
): Promise<LiveSlot | undefined> {
  const slot = d.sessions.get(src);
  if (slot === undefined) return undefined;
  if (slot.state === 'pending') {
    throw fail('SESSION_OPEN', `${what}: source ${formatTarget(src)} has a session being opened`, {
      retryable: true,
      hint: 'retry once the open has returned',
    });
  }
  if (!readsHead) return undefined;
  await refuseAgentFlush(d, src, actor);
  return slot;
}
