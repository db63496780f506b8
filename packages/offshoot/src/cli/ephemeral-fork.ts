import { hasCode, OffshootError } from '../core/errors.js';
import type { Meta } from '../core/meta.js';
import type { Target } from '../core/target.js';
import type { Invocation, Outcome } from './command.js';
import { withDaemon } from './daemon-request.js';
import { ephemeralForkOutcome } from './output.js';

/**
 * `fork --ephemeral`: the forks are asked of the daemon serving the store, which holds them; without one there is
 * nowhere for them to live, and the refusal says so.
 */
export async function forkThroughDaemon(
  inv: Invocation,
  src: Target,
  names: readonly string[],
  opts: { at?: string; ttl: string | undefined; meta: Meta | undefined },
): Promise<Outcome> {
  try {
    const txid = await withDaemon(inv, (c) =>
      c.fork(src.db, src.branch, names.length === 1 ? (names[0] as string) : names, {
        ephemeral: true,
        ...(opts.at !== undefined ? { from: opts.at } : {}),
        ...(opts.ttl !== undefined ? { ttl: opts.ttl } : {}),
        ...(opts.meta !== undefined ? { meta: opts.meta } : {}),
        ...(inv.actor.kind === 'agent' ? { actor: 'agent' as const, allowForce: inv.actor.allowForce } : {}),
      }),
    );
    return ephemeralForkOutcome(src, names, txid);
  } catch (err) {
    if (!hasCode(err, 'UNAVAILABLE')) throw err;
    throw new OffshootError('UNAVAILABLE', `${err.message}: an ephemeral fork lives in the daemon that makes it`, {
      hint: "start 'offshoot serve' on this store (or pass the -socket of the daemon serving it), or fork without --ephemeral",
      cause: err,
    });
  }
}
