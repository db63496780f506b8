import type { DaemonContext } from '../daemon-context.js';
import type { Origin } from '../../core/history.js';

/**
 * The origin of the request a handler answers, for a flush of a session someone else opened: its record names who
 * asked for that flush, not the session's opener.
 */
export function askedBy(d: DaemonContext): { origin?: Origin } {
  const origin = d.ops.origin;
  return origin === undefined ? {} : { origin };
}
