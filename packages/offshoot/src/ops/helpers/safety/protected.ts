import { fail } from '../../../core/errors.js';
import type { Ref } from '../../../core/ref.js';

/** Refuses a destructive change to a protected branch unless forced. */
export function refuseProtected(ref: Ref, db: string, branch: string, what: string, force: boolean): void {
  if (ref.protected && !force) {
    throw fail('PROTECTED', `${db}@${branch} is protected; use --force to ${what} it`, {
      hint: `pass --force deliberately, or run 'offshoot unprotect ${db}@${branch}' first`,
    });
  }
}
