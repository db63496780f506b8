import { newlyPostponed, reap } from '../ops/reap.js';
import { type ReapHold, reapHoldText } from '../ops/branch-view.js';
import { clearStaleClaims } from '../ops/gc.js';
import { type OpsContext, withOrigin } from '../ops/context.js';
import { servingDaemon as serving } from './daemon/daemon-link.js';

/** The background reap of `offshoot mcp -reap-every`: expires TTL'd forks and clears stranded delete claims, no GC. */
export interface Reaper {
  stop(): Promise<void>;
}

/** The socket of a live `offshoot serve` on this store that answers, if any: it owns reaping while it is up. */
async function servingDaemon(ctx: OpsContext): Promise<string | undefined> {
  const d = await serving(ctx);
  d?.client.close();
  return d?.socket;
}

/**
 * Runs one pass every `everyMs` (never two at once): reaps TTL-expired branches (then calls `reaped`, so subscribers
 * hear of it at once; a reap its checkout postpones is logged once) and clears delete claims left by destroys that died. While a real daemon serves the same store it steps aside (logging once), since that daemon's
 * janitor does the same work; it resumes when the daemon goes away. A failed pass is logged and retried next time.
 */
export function startReaper(
  open: () => Promise<OpsContext>,
  everyMs: number,
  log: (line: string) => void,
  reaped: () => Promise<void>,
): Reaper {
  let deferringTo: string | undefined;
  const postponed = new Map<string, ReapHold>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async (): Promise<void> => {
    const ctx = await open();
    const daemon = await servingDaemon(ctx);
    if (daemon !== undefined) {
      if (deferringTo !== daemon) log(`offshoot: mcp: reaper: deferring to the daemon serving this store on ${daemon}`);
      deferringTo = daemon;
      return;
    }
    if (deferringTo !== undefined) log('offshoot: mcp: reaper: the daemon is gone; reaping here again');
    deferringTo = undefined;
    const r = await reap(withOrigin(ctx, { actor: 'human', surface: 'mcp:reaper' }));
    const cleared = await clearStaleClaims(ctx);
    if (r.reaped.length > 0) {
      log(`offshoot: mcp: reaper: reaped ${r.reaped.join(', ')}`);
      await reaped();
    }
    for (const p of newlyPostponed(postponed, r.postponed))
      log(`offshoot: mcp: reaper: postponed ${p.name}: ${reapHoldText(p.reason)}`);
    for (const e of r.errors) log(`offshoot: mcp: reaper: ${e}`);
    if (cleared.length > 0) log(`offshoot: mcp: reaper: cleared stale delete claim(s) ${cleared.join(', ')}`);
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass()
        .catch((err: Error) => log(`offshoot: mcp: reaper: ${err.message}`))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, everyMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
