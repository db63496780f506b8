import { fail } from '../../../core/errors.js';
import type { EphemeralHost } from '../context/ephemeral-host.js';
import type { OpsContext } from '../context/context.js';

/**
 * The daemon's ephemeral forks, when a fork asks to be one: refused (UNSUPPORTED) where no daemon serves the request,
 * since an ephemeral fork lives in the daemon that makes it and nowhere else.
 */
export function ephemeralHostFor(ctx: OpsContext, ephemeral: boolean | undefined): EphemeralHost | undefined {
  if (ephemeral !== true) return undefined;
  if (ctx.ephemeral !== undefined) return ctx.ephemeral;
  throw fail('UNSUPPORTED', 'an ephemeral fork lives in the daemon that makes it, and no daemon serves this request', {
    hint: "start 'offshoot serve' on this store and fork through it, or fork without --ephemeral",
    hints: {
      agent: 'ephemeral forks need offshoot mcp to ride a daemon (-socket); fork without ephemeral instead',
      sdk: 'fork through a client connected to the daemon, or without ephemeral',
    },
  });
}
