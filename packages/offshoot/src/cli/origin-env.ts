import { fail } from '../core/errors.js';
import { type LogActor, type Origin, validateOriginMeta, validateSurface } from '../core/history.js';
import { nameMap } from '../core/name-map.js';

/**
 * Who a CLI run says asks, for the records of the branch log: the actor (--actor), the surface (`cli`, or what
 * OFFSHOOT_SURFACE says: an SDK that drives the CLI at rest names itself, `sdk:<adapter>/<framework>`) and the
 * actor's tags from OFFSHOOT_ACTOR_META (`run=r-1,agent=claude`).
 */
export function cliOrigin(actor: LogActor, env: NodeJS.ProcessEnv): Origin {
  const surface =
    env.OFFSHOOT_SURFACE === undefined || env.OFFSHOOT_SURFACE === '' ? 'cli' : validateSurface(env.OFFSHOOT_SURFACE);
  const meta = actorMeta(env.OFFSHOOT_ACTOR_META);
  return { actor, surface, ...(meta !== undefined ? { meta } : {}) };
}

// `k=v,k=v` as tags; empty or unset is none.
function actorMeta(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const meta = nameMap<string>();
  for (const pair of text.split(',')) {
    const i = pair.indexOf('=');
    if (i <= 0)
      throw fail('USAGE', `OFFSHOOT_ACTOR_META: ${JSON.stringify(pair)} is not key=value`, {
        hint: 'set OFFSHOOT_ACTOR_META=run=r-1,agent=claude (comma-separated key=value tags), or unset it',
      });
    meta[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return validateOriginMeta(meta);
}
