import { fail, type OffshootError } from '../../../core/errors.js';
import { durationMs, parseDuration, type TtlArg } from '../../../core/duration.js';
import type { Ref } from '../../../core/ref.js';
import { leaseLive } from '../branch/branch-ref.js';
import type { OpsContext } from '../context/context.js';

/** What the human who started an agent-facing server (offshoot mcp) allows its agent to do. */
export interface AgentPolicy {
  /** `-allow-force`: honour `force` (protected targets, live-lease bypass) and touch the undo points of protected branches. */
  allowForce: boolean;
}

/** A destructive or clock-changing call an agent asks for, checked before anything is written. */
export type AgentAction =
  | { verb: 'destroy'; db: string; branch: string; force: boolean }
  | { verb: 'promote'; db: string; source: string; target: string; force: boolean }
  | { verb: 'rollback'; db: string; branch: string }
  | { verb: 'touch'; db: string; branch: string; ttl: TtlArg };

const SAFETY_SUFFIXES = ['pre-rollback', 'pre-promote'] as const;

const RESTART = "or restart 'offshoot mcp' with -allow-force to let the agent force it";

/** Reads a ref for a guard; any failure but a missing branch refuses the call, so a storage hiccup never lets a force through. */
async function readForGuard(ctx: OpsContext, db: string, branch: string): Promise<Ref | undefined> {
  try {
    return (await ctx.store.tryGetRef(db, branch))?.ref;
  } catch (err) {
    const e = err as OffshootError;
    throw fail('PROTECTED', `cannot read the protected flag of ${db}@${branch} (${e.message}); refusing to go ahead`, {
      retryable: true,
      hint: 'retry once the store answers; the call was refused before any change',
    });
  }
}

/** The branch a safety fork was taken from (its meta, else its name), when `name` is one. */
function safetyOrigin(name: string, ref: Ref): string | undefined {
  const tagged = ref.meta?.['offshoot.of'];
  if (tagged !== undefined && ref.meta?.['offshoot.safety'] !== undefined) return tagged;
  for (const s of SAFETY_SUFFIXES) if (name.endsWith(`-${s}`)) return name.slice(0, -(s.length + 1));
  return undefined;
}

/** True when `branch` is the undo point of a protected branch (which the agent must leave to the human). */
async function guardedUndoPoint(ctx: OpsContext, db: string, branch: string, ref: Ref): Promise<string | undefined> {
  const origin = safetyOrigin(branch, ref);
  if (origin === undefined || origin === branch) return undefined;
  const o = await readForGuard(ctx, db, origin);
  return o?.protected ? origin : undefined;
}

function refuseUndoPoint(db: string, branch: string, origin: string, what: string, human: string): never {
  throw fail(
    'PROTECTED',
    `${db}@${branch} is the undo point of protected ${db}@${origin}; ${what} it needs -allow-force, which this server was not started with`,
    { hint: `ask the human to run '${human}', ${RESTART}` },
  );
}

function refuseProtectedTarget(db: string, branch: string, what: string, human: string, allowForce: boolean): never {
  throw fail(
    'PROTECTED',
    allowForce
      ? `${db}@${branch} is protected; ${what} it needs force: true`
      : `${db}@${branch} is protected; ${what} it needs -allow-force, which this server was not started with`,
    {
      hint: allowForce
        ? 'pass force: true only if the human asked for exactly this'
        : `ask the human to run '${human}', or work on a fork; ${RESTART}`,
    },
  );
}

/** A touch that only moves the reap deadline later (or keeps the TTL) never shortens an undo point's life. */
function touchShortens(ref: Ref, ttl: TtlArg, now: Date): boolean {
  if (ttl.kind === 'keep') return false;
  if (ttl.kind === 'none') return true;
  if (!ref.ttl) return true;
  const current = (Date.parse(ref.touched_at ?? '') || now.getTime()) + durationMs(parseDuration(ref.ttl));
  return now.getTime() + durationMs(ttl.ttl) < current;
}

/**
 * The agent safety posture, checked before any mutation: a protected target (promote's target, destroy's branch)
 * needs both `force` and a policy that allows it; the live-lease bypass of destroy is gated the same way; the undo
 * points of a protected branch (`<b>-pre-rollback`, `<b>-pre-promote`) cannot be destroyed, promoted onto or have
 * their TTL shortened or cleared; and a protected branch is not rolled back again while its last undo point still
 * exists. Returns the force the verb may use.
 */
export async function guardAgentAction(
  ctx: OpsContext,
  action: AgentAction,
  policy: AgentPolicy,
): Promise<{ force: boolean }> {
  const { db } = action;
  if (action.verb === 'touch') {
    if (policy.allowForce || action.ttl.kind === 'keep') return { force: false };
    const ref = await readForGuard(ctx, db, action.branch);
    if (ref && touchShortens(ref, action.ttl, ctx.now())) {
      const origin = await guardedUndoPoint(ctx, db, action.branch, ref);
      if (origin !== undefined)
        refuseUndoPoint(
          db,
          action.branch,
          origin,
          'shortening or clearing the TTL of',
          `offshoot touch ${db}@${action.branch} --ttl <d>`,
        );
    }
    return { force: false };
  }
  if (action.verb === 'rollback') {
    if (policy.allowForce) return { force: false };
    const ref = await readForGuard(ctx, db, action.branch);
    if (!ref?.protected) return { force: false };
    const undo = `${action.branch}-pre-rollback`;
    if (await readForGuard(ctx, db, undo)) {
      throw fail(
        'PROTECTED',
        `${db}@${action.branch} is protected and its undo point ${db}@${undo} from the last rollback still exists; a second rollback would replace it`,
        {
          hint: `ask the human to keep it ('offshoot promote ${db}@${undo} --onto ${action.branch} --force') or drop it ('offshoot destroy ${db}@${undo} --force') first, ${RESTART}`,
        },
      );
    }
    return { force: false };
  }
  const branch = action.verb === 'destroy' ? action.branch : action.target;
  const wanted = action.force && policy.allowForce;
  const ref = await readForGuard(ctx, db, branch);
  if (ref === undefined) return { force: wanted };
  const human =
    action.verb === 'destroy'
      ? `offshoot destroy ${db}@${branch} --force`
      : `offshoot promote ${db}@${action.source} --onto ${branch} --force`;
  const what = action.verb === 'destroy' ? 'destroying' : 'promoting onto';
  if (ref.protected && !wanted) refuseProtectedTarget(db, branch, what, human, policy.allowForce);
  if (!policy.allowForce) {
    const origin = await guardedUndoPoint(ctx, db, branch, ref);
    if (origin !== undefined) refuseUndoPoint(db, branch, origin, what, human);
    if (action.verb === 'destroy' && action.force && leaseLive(ref, ctx.now()) && ref.lease_holder !== ctx.holder) {
      throw fail(
        'LEASE_HELD',
        `${db}@${branch} has a live lease held by ${ref.lease_holder}; bypassing it needs -allow-force, which this server was not started with`,
        { hint: `close that session first (offshoot session close ${db}@${branch}), ${RESTART}` },
      );
    }
  }
  return { force: wanted };
}
