import type { OpsContext } from '../ops/context.js';
import { parseByteSize } from './byte-size.js';
import type { FlagSpec, FlagValues } from './command.js';

/** The read-only cache budget of CLI commands unless --ro-cache-budget or $OFFSHOOT_RO_CACHE_BUDGET says otherwise. */
export const DEFAULT_CLI_RO_CACHE_BUDGET = '2G';

/** The --ro-cache-budget flag of the commands that fill the read-only cache. */
export const RO_CACHE_BUDGET_FLAG: FlagSpec = {
  type: 'string',
  value: 'BYTES',
  description: `trim checkouts-ro/ to this size afterwards (default $OFFSHOOT_RO_CACHE_BUDGET, else ${DEFAULT_CLI_RO_CACHE_BUDGET}; 0: unlimited)`,
};

/** The budget in bytes (0: unlimited): the flag, else $OFFSHOOT_RO_CACHE_BUDGET, else the default. */
export function cliRoCacheBudget(flags: FlagValues, env: NodeJS.ProcessEnv): number {
  const flag = flags.string('ro-cache-budget');
  if (flag !== undefined) return parseByteSize(flag, '--ro-cache-budget');
  const fromEnv = env.OFFSHOOT_RO_CACHE_BUDGET;
  if (fromEnv !== undefined && fromEnv !== '') return parseByteSize(fromEnv, 'OFFSHOOT_RO_CACHE_BUDGET');
  return parseByteSize(DEFAULT_CLI_RO_CACHE_BUDGET, 'the default ro-cache budget');
}

/**
 * Trims the per-chain read-only cache to the budget after a command that may have filled it, least recently used
 * first; read-only checkpoint checkouts (paths a command printed) are never removed. The command already succeeded,
 * so a failed trim is only a warning.
 */
export async function trimRoCache(ctx: OpsContext, budget: number): Promise<void> {
  try {
    const { enforceRoCacheBudget } = await import('../ops/checkout-at.js');
    await enforceRoCacheBudget(ctx.checkoutRoot, budget, { chainOnly: true });
  } catch (err) {
    ctx.warn(`could not trim the read-only cache: ${(err as Error).message}`);
  }
}
