import { daemonState } from '../daemon/branch-info.js';
import type { DaemonContext } from '../daemon/daemon-context.js';
import { MetricsSeries } from './metrics-series.js';
import { createUiHandler, type UiHandler } from './ui-handler.js';

/**
 * The dashboard mounted on a daemon's HTTP listener (`serve -ui`): the same routes as `offshoot ui`, plus the
 * daemon's open sessions (durable txid, lag), its states (error, pending), its event stream and metric samples.
 * The daemon's own bearer token guards it.
 */
export function daemonUi(d: DaemonContext, token: string, storeLabel: string, version: string): UiHandler {
  const series = new MetricsSeries(() => d.metrics.render());
  const ui = createUiHandler(
    {
      ctx: d.ops,
      storeLabel,
      version,
      live: {
        sessions: () => d.sessions.live().map((s) => s.session.info()),
        state: (db, branch, atRest) => daemonState(atRest, d.sessions.get({ db, branch })),
        subscribe: () => d.events.subscribe(),
        series: () => ({ intervalSeconds: series.intervalSeconds, samples: series.samples() }),
      },
    },
    token,
  );
  return {
    handle: ui.handle,
    close: () => {
      series.stop();
      ui.close();
    },
  };
}
