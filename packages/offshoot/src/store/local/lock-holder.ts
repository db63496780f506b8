import { processAlive } from '../../platform/process-alive.js';
import { processSpace } from '../../platform/process-space.js';

/**
 * The text a key lock file holds: `pid@host:pidns` and a newline, which marks it as completely written. The pid
 * namespace makes "this pid is gone" a claim about the right processes.
 */
export function holderText(): string {
  return `${process.pid}@${processSpace()}\n`;
}

/**
 * True only when text names a process of this host and pid namespace that no longer exists. Anything else (a
 * half-written or garbled file, another host or namespace, the earlier `host/pid` format, a live or unprobeable
 * pid) is false, leaving the lock to the age rule.
 */
export function holderIsDeadHere(text: string): boolean {
  const m = /^([1-9][0-9]{0,9})@([^\n]+)\n$/.exec(text);
  if (m === null || m[2] !== processSpace()) return false;
  const pid = Number(m[1]);
  return pid !== process.pid && !processAlive(pid);
}
