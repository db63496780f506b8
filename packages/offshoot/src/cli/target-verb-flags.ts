import type { Actor } from '../ops/policy.js';
import type { FlagSpec, Invocation } from './command.js';
import { RO_CACHE_BUDGET_FLAG } from './ro-cache-budget.js';
import { SOCKET_FLAG } from './socket-flag.js';

// promote and merge both write TARGET's head from a source's state: they end on the same flags and ask the op the
// same way, so a flag one gains (or a wording one changes) cannot leave the other behind.

/** The flags promote and merge end with: --check, then what reading the source and flushing its session take. */
export const TARGET_VERB_FLAGS: Record<string, FlagSpec> = {
  check: {
    type: 'boolean',
    description: 'only check: run every refusal it would meet now, change nothing',
  },
  'ro-cache-budget': RO_CACHE_BUDGET_FLAG,
  socket: SOCKET_FLAG,
};

/** What promote and merge (and their checks) pass to the op from the line: --force, and who asks. */
export function targetVerbOptions(inv: Invocation): { force: boolean; actor: Actor } {
  return { force: inv.flags.boolean('force'), actor: inv.actor };
}
