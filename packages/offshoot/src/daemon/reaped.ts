import type { DaemonContext } from './daemon-context.js';
import { janitorLogLine } from './log-line.js';

/** Announces reaped branches (`db@branch` names): a `reaped` event and a log line each, and the reap counter. */
export function announceReaped(d: DaemonContext, names: readonly string[]): void {
  for (const name of names) {
    const at = name.indexOf('@');
    d.events.publish('reaped', name.slice(0, at), name.slice(at + 1));
    d.options.log(janitorLogLine(`reaped ${name}`));
  }
  d.metrics.reaped(names.length);
}
