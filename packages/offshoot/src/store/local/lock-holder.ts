import { hostname } from 'node:os';
import { processAlive } from '../../platform/process-alive.js';

/** The text a key lock file holds: `host/pid` and a newline, which marks it as completely written. */
export function holderText(): string {
  return `${hostname()}/${process.pid}\n`;
}

/**
 * True only when text names a process of this host that no longer exists. Anything else (a half-written or
 * garbled file, another host, a live or unprobeable pid) is false, leaving the lock to the age rule.
 */
export function holderIsDeadHere(text: string): boolean {
  const m = /^([^/\n]+)\/([1-9][0-9]{0,9})\n$/.exec(text);
  if (m === null || m[1] !== hostname()) return false;
  const pid = Number(m[2]);
  if (pid === process.pid || pid > 0x7fffffff) return false;
  return !processAlive(pid);
}
