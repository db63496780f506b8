import { fail } from '../core/errors.js';
import type { Request } from '../protocol/wire.js';
import { canonicalStore, parseStoreSpec } from '../store/store-spec.js';

/**
 * Refuses a request whose `store` names a store other than the one this daemon serves, so a client that found the
 * wrong socket never drives another store. A request without `store` (an older client) is served as before.
 */
export function refuseOtherStore(req: Request, served: string): void {
  if (req.store === undefined || req.store === '') return;
  const stated = canonicalStore(parseStoreSpec(req.store));
  if (stated === served) return;
  throw fail('INVALID_ARGUMENT', `this daemon serves store ${served}, not ${stated}`, {
    hint: `start a daemon for ${stated} ('offshoot -store ${stated} serve'), or pass the -socket of the daemon that serves it`,
  });
}
