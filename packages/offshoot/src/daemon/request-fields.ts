import { fail } from '../core/errors.js';
import { validateName, type NameKind } from '../core/names.js';
import { MAIN_BRANCH, type Target, validatePointName } from '../core/target.js';
import type { Actor } from '../ops/policy.js';
import { type Origin, validateOriginMeta, validateSurface } from '../core/history.js';
import { keysAsSent } from '../core/name-map.js';
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

/** The request's `name` as an optional point to read: a checkpoint or a moment (`tx:42`, `at:…`); empty means none. */
export function optionalPoint(req: Request): string | undefined {
  return req.name === undefined || req.name === '' ? undefined : validatePointName(req.name);
}

/** The request's `name` as the point an op requires: a checkpoint or a moment (`tx:42`, `at:<RFC 3339>`). */
export function requiredPoint(req: Request, what: string): string {
  if (req.name === undefined || req.name === '') {
    throw fail('INVALID_ARGUMENT', `${req.op}: ${what} is required`, {
      hint: `set "name" to the ${what}: a checkpoint, or a moment such as "tx:42" or "at:2026-12-07T10:00:00Z"`,
    });
  }
  return validatePointName(req.name);
}

/** The request's `name` as an optional checkpoint (empty means none). */
export function optionalCheckpoint(req: Request): string | undefined {
  return req.name === undefined || req.name === '' ? undefined : validateName('checkpoint', req.name);
}

/** Who a request says is asking: a human unless it says `actor: "agent"` (then `allow_force` lets it force). */
export function requestActor(req: Request): Actor {
  return req.actor === 'agent' ? { kind: 'agent', allowForce: req.allow_force === true } : { kind: 'human' };
}

/**
 * Who a request says asked, for the records it leads to: its actor, the surface its `origin` names (`daemon` when it
 * names none: a request over the wire from no SDK that says so) and the actor's tags.
 */
export function requestOrigin(req: Request, raw: unknown): Origin {
  const o = req.origin;
  const sentMeta = (raw as { origin?: { meta?: unknown } } | undefined)?.origin?.meta;
  const meta = o?.meta === undefined ? undefined : validateOriginMeta(keysAsSent(o.meta, sentMeta));
  return {
    actor: req.actor === 'agent' ? 'agent' : 'human',
    surface: o?.surface === undefined || o.surface === '' ? 'daemon' : validateSurface(o.surface),
    ...(meta !== undefined ? { meta } : {}),
  };
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
