import { fail } from '../core/errors.js';
import type { OpsContext, ProgressSink } from '../ops/context.js';
import type { StoreSpec } from '../store/store-spec.js';
import type { Origin } from '../core/history.js';
import { checkoutRootFor } from './checkout-root.js';

/** How the context reports to the terminal. */
export interface ContextIo {
  warn: (message: string) => void;
  progress: (() => ProgressSink) | undefined;
}

/**
 * Opens an initialized store (manifest and layout checked; S3 stores run the CAS probe) and builds the ops context
 * around it. The store and ops modules load here, on first use, so help, version and usage errors never pay for them.
 */
export async function openOpsContext(
  spec: StoreSpec,
  env: NodeJS.ProcessEnv,
  io: ContextIo,
  origin?: Origin,
): Promise<OpsContext> {
  const [{ Store }, { makeContext }] = await Promise.all([import('../store/store.js'), import('../ops/context.js')]);
  const every = snapshotEveryFrom(env);
  const store = await Store.open(spec);
  return makeContext(store, checkoutRootFor(spec, env), {
    warn: io.warn,
    ...(io.progress ? { progress: io.progress } : {}),
    ...(every !== undefined ? { snapshotEvery: every } : {}),
    ...(origin !== undefined ? { origin } : {}),
  });
}

/** OFFSHOOT_SNAPSHOT_EVERY: the at-rest twin of serve's -snapshot-every (it bounds chains; default 16). */
function snapshotEveryFrom(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.OFFSHOOT_SNAPSHOT_EVERY;
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    throw fail('USAGE', `OFFSHOOT_SNAPSHOT_EVERY must be an integer of at least 1, got ${JSON.stringify(text)}`, {
      hint: 'unset OFFSHOOT_SNAPSHOT_EVERY or set it to a count such as 16',
    });
  }
  return n;
}
