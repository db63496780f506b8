import type { ServerContext } from '@modelcontextprotocol/server';
import type { ProgressSink } from '../ops/context.js';
import type { CallControl } from './deps.js';

/** Notifications per long step at most: one per percent moved, so a large download does not flood the client. */
const STEPS = 100;

/**
 * The control of one tool call: its cancellation signal, and a progress sink for the ops. The sink checks the signal
 * on every update, so a cancelled materialization stops mid-stream (the ops remove their private temp file and
 * leave no half-written checkout); it sends `notifications/progress` only when the call carried a progress token.
 */
export function callControl(ctx: ServerContext): CallControl {
  const req = ctx.mcpReq;
  const token = req._meta?.progressToken;
  let sent = 0;
  const notify = (progress: number, total: number | undefined, message: string): void => {
    if (token === undefined) return;
    sent = Math.max(sent + 1, progress);
    void req
      .notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress: sent, ...(total !== undefined ? { total } : {}), message },
      })
      .catch(() => undefined);
  };
  const sink = (): ProgressSink => {
    // Several long steps in one call continue one count: each starts where the last notification left off.
    let label = '';
    let total = 0;
    let base = 0;
    let shown = -1;
    return {
      start(l, t) {
        req.signal.throwIfAborted();
        label = l;
        total = t;
        base = sent;
      },
      update(done) {
        req.signal.throwIfAborted();
        const step = total > 0 ? Math.floor((done / total) * STEPS) : 0;
        if (step > shown) {
          shown = step;
          notify(base + done, base + total, `${label}: ${done} of ${total} bytes`);
        }
      },
      stop() {
        if (shown < STEPS) notify(base + total, base + total, `${label}: done`);
      },
    };
  };
  return {
    signal: req.signal,
    progress: sink,
    step: (message) => {
      req.signal.throwIfAborted();
      notify(sent + 1, undefined, message);
    },
  };
}
