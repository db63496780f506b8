import { fail } from '../../../core/errors.js';
import { validateName } from '../../../core/names.js';
import type { BranchState } from './branch-state.js';

/** Every branch state, in the order help and errors list them. */
export const BRANCH_STATES: readonly BranchState[] = ['active', 'dirty', 'detached', 'idle', 'error', 'pending'];

/** Which branches a status reports: exact database and state matches, at most `limit` of them. */
export interface StatusFilter {
  /** Only these databases (deduplicated and sorted); undefined: the whole store. */
  dbs: string[] | undefined;
  /** Only branches in one of these states; undefined: every state. */
  states: ReadonlySet<BranchState> | undefined;
  /** At most this many branches; the rest are counted, not reported. */
  limit: number | undefined;
}

/** What a caller may ask status to filter by, as given (names and states unchecked). */
export interface StatusFilterInput {
  db?: string;
  dbs?: readonly string[];
  states?: readonly string[];
  limit?: number;
}

function checkState(s: string): BranchState {
  if ((BRANCH_STATES as readonly string[]).includes(s)) return s as BranchState;
  throw fail('INVALID_ARGUMENT', `unknown branch state ${JSON.stringify(s)}`, {
    hint: `use one of: ${BRANCH_STATES.join(', ')}`,
  });
}

/** Checks and normalizes a status filter; an unknown state, a bad name or a limit below 1 is INVALID_ARGUMENT. */
export function statusFilter(input: StatusFilterInput): StatusFilter {
  const named = [...(input.db === undefined ? [] : [input.db]), ...(input.dbs ?? [])];
  const dbs = named.length === 0 ? undefined : [...new Set(named.map((d) => validateName('database', d)))].sort();
  const states =
    input.states === undefined || input.states.length === 0 ? undefined : new Set(input.states.map(checkState));
  const { limit } = input;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
    throw fail('INVALID_ARGUMENT', `limit must be a whole number of at least 1, got ${limit}`, {
      hint: 'give the most branches to report, e.g. a limit of 100',
    });
  return { dbs, states, limit };
}
