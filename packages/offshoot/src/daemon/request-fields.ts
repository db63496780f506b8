import { fail } from '../core/errors.js';
import { validateName, type NameKind } from '../core/names.js';
import { MAIN_BRANCH, type Target } from '../core/target.js';
import type { Actor } from '../ops/policy.js';
import type { Request } from '../protocol/wire.js';

/**
 * The `db@branch` a request names: `db` is required, an omitted `branch` is main. An empty `branch` is an invalid
 * name, never main: a caller that vets the name it sends (an agent's approval) must see the branch the op acts on.
 */
export function requestTarget(req: Request): Target {
  if (req.db === undefined || req.db === '') {
    throw fail('INVALID_ARGUMENT', `${req.op}: db is required`, { hint: 'set "db" in the request' });
  }
  const db = validateName('database', req.db);
  if (req.branch === '')
    throw fail('INVALID_NAME', `${req.op}: the branch name is empty`, {
      hint: `name the branch, or leave "branch" out for ${MAIN_BRANCH}`,
    });
  const branch = req.branch === undefined ? MAIN_BRANCH : validateName('branch', req.branch);
  return { db, branch };
}

/** The request's `name` field when the op requires it (a checkpoint, a new branch or a promote target). */
export function requiredName(req: Request, kind: NameKind, what: string): string {
  if (req.name === undefined || req.name === '') {
    throw fail('INVALID_ARGUMENT', `${req.op}: ${what} is required`, { hint: `set "name" to the ${what}` });
  }
  return validateName(kind, req.name);
}

/** The request's `name` as an optional checkpoint (empty means none). */
export function optionalCheckpoint(req: Request): string | undefined {
  return req.name === undefined || req.name === '' ? undefined : validateName('checkpoint', req.name);
}

/** Who a request says is asking: a human unless it says `actor: "agent"` (then `allow_force` lets it force). */
export function requestActor(req: Request): Actor {
  return req.actor === 'agent' ? { kind: 'agent', allowForce: req.allow_force === true } : { kind: 'human' };
}

/** The request's `if_head`, a txid (a non-negative integer), or undefined when absent. */
export function requestIfHead(req: Request): number | undefined {
  const v = req.if_head;
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v) || v < 0)
    throw fail('INVALID_ARGUMENT', `${req.op}: if_head must be a txid (a whole number), not ${JSON.stringify(v)}`, {
      hint: 'set "if_head" to the head txid the target must still be at, as branches reports it (head_txid)',
    });
  return v;
}
