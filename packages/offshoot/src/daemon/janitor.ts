import { hasCode } from '../core/errors.js';
import { clearStaleClaims, collectGarbage } from '../ops/gc.js';
import { compactBranch } from '../ops/compact.js';
import { newlyPostponed, reap } from '../ops/reap.js';
import { type ReapHold, reapHoldText } from '../ops/branch-view.js';
import type { DaemonContext } from './daemon-context.js';
import { janitorLogLine } from './log-line.js';
import { announceReaped } from './reaped.js';
import { enforceRoCacheBudget } from '../ops/checkout-at.js';
import { ChainResolver } from '../store/chain-resolver.js';
import { Ticker } from './ticker.js';

/**
 * The background maintenance loop, every -reap-every: reap expired branches, clear stale destroy claims, merge chains
 * grown past their soft bound (branches written at rest; sessions merge their own), collect garbage past
 * -gc-grace, and keep the read-only cache within -ro-cache-budget. Each step runs even if an earlier
 * one failed; a failed step makes the run count as an error.
 */
export class Janitor {
  private readonly ticker: Ticker;
  private backlog = 0;
  /** The reaps the last pass postponed, so each is logged once. */
  private readonly postponed = new Map<string, ReapHold>();

  constructor(private readonly d: DaemonContext) {
    this.ticker = new Ticker(
      d.options.reapEveryMs,
      () => this.d.maintenance.run(() => this.run()).then(() => undefined),
      (err) => d.options.log(janitorLogLine(`run failed: ${(err as Error).message}`)),
    );
  }

  /** Starts the cadence (a -reap-every of 0 disables the janitor). */
  start(): void {
    this.ticker.start();
  }

  /** Stops the cadence, waiting for a run in progress. */
  stop(): Promise<void> {
    return this.ticker.stop();
  }

  private async step(what: string, fn: () => Promise<void>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      this.d.options.log(janitorLogLine(`${what} failed: ${(err as Error).message}`));
      return false;
    }
  }

  /** One pass; resolves to its result as counted in janitor_runs_total. */
  async run(): Promise<'ok' | 'error'> {
    const { d } = this;
    const log = (m: string): void => d.options.log(janitorLogLine(m));
    const reaped = await this.step('reap', async () => {
      const r = await reap(d.ops);
      announceReaped(d, r.reaped);
      for (const p of newlyPostponed(this.postponed, r.postponed))
        log(`reap: postponed ${p.name}: ${reapHoldText(p.reason)}`);
      for (const e of r.errors) log(`reap: ${e}`);
    });
    const cleared = await this.step('clear claims', async () => {
      for (const name of await clearStaleClaims(d.ops)) log(`cleared stale delete claim on ${name}`);
    });
    const merged = await this.step('merge', async () => {
      const resolver = new ChainResolver(d.ops.store);
      let failed = 0;
      for (const { db, branch } of await d.ops.store.listAllBranches()) {
        const c = await compactBranch(d.ops, db, branch, resolver).catch((err: unknown) => {
          // One branch's failed merge costs it a longer chain until the next pass; the others still merge.
          log(`merge: ${db}@${branch}: ${(err as Error).message}`);
          failed++;
          return undefined;
        });
        if (c?.merged) log(`merge: ${db}@${branch}: ${c.merged.replaced} members into ${c.merged.object.key}`);
      }
      if (failed > 0) throw new Error(`${failed} branch(es) not merged`);
    });
    const collected = await this.step('gc', async () => {
      try {
        const c = await collectGarbage(d.durable, d.options.gcGrace);
        this.backlog = c.backlog;
        d.metrics.gcPass(c);
        for (const u of c.unreadable) log(`gc: ${u}; kept every object it may reach`);
        if (c.tombstoned > 0 || c.deleted > 0)
          log(`gc: tombstoned ${c.tombstoned}, deleted ${c.deleted} objects (backlog ${c.backlog})`);
        if (c.temporaries > 0) log(`gc: removed ${c.temporaries} temporaries left by writers that died`);
      } catch (err) {
        // Another daemon's pass holds the store-wide GC lease: that pass does this tick's work.
        if (hasCode(err, 'BUSY')) return log(`gc: skipped: ${(err as Error).message}`);
        d.metrics.gcPass({ tombstoned: 0, deleted: 0, backlog: this.backlog, error: true });
        throw err;
      }
    });
    const cached = await this.step('ro-cache', async () => {
      const r = await enforceRoCacheBudget(d.ops.checkoutRoot, d.options.roCacheBudget);
      for (const e of r.evicted) {
        d.events.publish('evicted', e.db, e.branch, { checkpoint: e.checkpoint, bytes: e.bytes });
        log(
          `ro-cache: evicted ${e.db}${e.branch === undefined ? '' : `@${e.branch}`} ${e.checkpoint} (${e.bytes} bytes)`,
        );
      }
      d.metrics.roCache(r.bytes, r.evicted.length);
    });
    const result = reaped && cleared && merged && collected && cached ? 'ok' : 'error';
    d.metrics.janitorRun(result);
    return result;
  }
}
