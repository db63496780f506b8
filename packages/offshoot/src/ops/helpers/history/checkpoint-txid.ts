import { fail } from '../../../core/errors.js';
import { named } from '../../../core/name-map.js';
import type { Ref } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';

/** Resolves the txid a fork or rollback names: a checkpoint of the ref, or its head. */
export function checkpointTxid(ref: Ref, t: Target, name: string): number {
  const cp = named(ref.checkpoints, name);
  if (cp === undefined) {
    throw fail('NOT_FOUND', `no checkpoint "${name}" on ${t.db}@${t.branch}`, {
      hint: `list checkpoints with 'offshoot status'`,
    });
  }
  return cp.txid;
}
