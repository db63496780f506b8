import type { OpsContext, ProgressSink } from '../ops/helpers/context.js';
import type { StoreSpec } from '../store/store-spec.js';
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
export async function openOpsContext(spec: StoreSpec, env: NodeJS.ProcessEnv, io: ContextIo): Promise<OpsContext> {
  const [{ Store }, { makeContext }] = await Promise.all([
    import('../store/store.js'),
    import('../ops/helpers/context.js'),
  ]);
  const store = await Store.open(spec);
  return makeContext(store, checkoutRootFor(spec, env), {
    warn: io.warn,
    ...(io.progress ? { progress: io.progress } : {}),
  });
}
