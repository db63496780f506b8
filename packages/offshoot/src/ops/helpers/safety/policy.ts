import { fail } from '../../../core/errors.js';
import type { TtlArg } from '../../../core/duration.js';
import { formatDuration } from '../../../core/duration.js';
import type { Ref } from '../../../core/ref.js';
import type { Target } from '../../../core/target.js';
import { reapDeadline } from '../branch/expiry.js';
import { undoCommand } from '../branch/undo-command.js';
import { leaseEnd, readLiveness, type Liveness } from '../branch/lease-liveness.js';
import type { OpsContext } from '../context/context.js';
import { undoPointName, undoPointOrigin } from '../branch/undo-point-names.js';
import type { CheckoutWork } from '../checkout/checkout-work.js';

/**
 * Who asks for a destructive change: a human (the CLI, an SDK over the daemon) or an agent (the MCP server, or a
 * daemon request that says so), whose human may have started its server with -allow-force to let it force.
 */
export type Actor = { kind: 'human' } | { kind: 'agent'; allowForce: boolean };

/** The actor every verb assumes when its caller names none. */
export const HUMAN: Actor = { kind: 'human' };

const RESTART = "or restart 'offshoot mcp' with -allow-force to let the agent force it";
/** The same, for an agent that talks to the daemon (an SDK adapter that says actor: "agent"). */
const RECONNECT = 'or have its human connect it with allow_force to let it force';
/** The same, for the CLI under --actor agent. */
const RERUN = 'or, if the human lets the agent force it, run the command again with --allow-force';

/**
 * The hint of an agent refusal its human may lift, in each caller's terms: the CLI's --allow-force, the MCP server's
 * -allow-force, the wire's allow_force. `body` is the same for all, or differs where it names a command or a tool.
 */
function agentHints(body: string | { cli: string; agent: string }): {
  hint: string;
  hints: { agent: string; sdk: string };
  humanCanAllow: true;
} {
  const { cli, agent } = typeof body === 'string' ? { cli: body, agent: body } : body;
  const tail = (text: string, how: string) => `${text}${text.endsWith(';') ? ' ' : ', '}${how}`;
  return {
    hint: tail(cli, RERUN),
    hints: { agent: tail(agent, RESTART), sdk: tail(agent, RECONNECT) },
    humanCanAllow: true,
  };
}

/** The hint that force is the caller's to pass, in its own terms. */
const PASS_FORCE = {
  hint: 'pass --force only if the human asked for exactly this',
  hints: {
    agent: 'pass force: true only if the human asked for exactly this',
    sdk: 'pass force only if the human asked for exactly this',
  },
};

/** Whether the agent restrictions are lifted: a human, or an agent whose human allowed it to force. */
function unrestricted(actor: Actor): boolean {
  return actor.kind === 'human' || actor.allowForce;
}

/**
 * The protected rule of destroy, promote and merge: a protected branch needs force, and an agent's force counts only
 * under -allow-force. `human` is the command the human would run.
 */
export function refuseProtected(
  ref: Ref,
  db: string,
  branch: string,
  what: 'destroy' | 'promote onto' | 'merge into',
  force: boolean,
  actor: Actor,
  human: string,
): void {
  if (!ref.protected) return;
  if (actor.kind === 'human') {
    if (!force)
      throw fail('PROTECTED', `${db}@${branch} is protected; to ${what} it takes force`, {
        hint: `pass --force deliberately, or run 'offshoot unprotect ${db}@${branch}' first`,
        hints: { sdk: `pass force deliberately, or unprotect ${db}@${branch} first` },
      });
    return;
  }
  if (!actor.allowForce)
    throw fail(
      'PROTECTED',
      `${db}@${branch} is protected; to ${what} it needs -allow-force, which this server was not started with`,
      agentHints(`ask the human to run '${human}', or work on a fork;`),
    );
  if (!force) throw fail('PROTECTED', `${db}@${branch} is protected; to ${what} it needs force: true`, PASS_FORCE);
}

/** Reads the ref of the branch an undo point keeps; failing to read it refuses, so a hiccup never lets an agent through. */
async function originRef(ctx: OpsContext, db: string, origin: string): Promise<Ref | undefined> {
  try {
    return (await ctx.store.tryGetRef(db, origin))?.ref;
  } catch (err) {
    throw fail(
      'PROTECTED',
      `cannot read the protected flag of ${db}@${origin} (${(err as Error).message}); refusing to go ahead`,
      {
        retryable: true,
        hint: 'retry once the store answers; the call was refused before any change',
      },
    );
  }
}

/** How many undo points deep the way back of a protected branch is followed (each level adds a suffix to a name). */
const MAX_UNDO_DEPTH = 16;

/**
 * The protected branch whose way back `branch` is part of, when it is: its undo point, or the undo point of one
 * (a promote onto `main-pre-rollback` keeps the state it displaced as `main-pre-rollback-pre-promote`, which is then
 * the only copy of what undoing main's rollback would have restored). `of` is the branch it keeps the state of,
 * `root` the protected branch at the end of that chain.
 */
export async function undoPointOfProtected(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
): Promise<{ of: string; root: string } | undefined> {
  const of = undoPointOrigin(branch, ref);
  if (of === undefined || of === branch) return undefined;
  const seen = new Set([branch]);
  for (let origin: string | undefined = of; origin !== undefined && !seen.has(origin); ) {
    if (seen.size > MAX_UNDO_DEPTH) return undefined;
    const found = await originRef(ctx, db, origin);
    if (found === undefined) return undefined;
    if (found.protected) return { of, root: origin };
    seen.add(origin);
    origin = undoPointOrigin(origin, found);
  }
  return undefined;
}

/** How an undo point is named in a refusal: of the protected branch itself, or further down its way back. */
function undoPointWords(db: string, branch: string, u: { of: string; root: string }): string {
  return u.of === u.root
    ? `${db}@${branch} is the undo point of protected ${db}@${u.root}`
    : `${db}@${branch} is the undo point of ${db}@${u.of}, on the way back of protected ${db}@${u.root}`;
}

/**
 * Refuses an agent without -allow-force any change to the undo point of a protected branch, or to the undo point of
 * such an undo point (`what` names the change): those are the human's way back, and what the tool tells the human
 * to run.
 */
export async function refuseUndoPointChange(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  actor: Actor,
  what: string,
  human: string,
): Promise<void> {
  if (unrestricted(actor)) return;
  const u = await undoPointOfProtected(ctx, db, branch, ref);
  if (u === undefined) return;
  throw fail(
    'PROTECTED',
    `${undoPointWords(db, branch, u)}; ${what} it needs -allow-force, which this server was not started with`,
    agentHints(`ask the human to run '${human}'`),
  );
}

/**
 * The rule of every write into a branch's head, explicit (a checkpoint, a session's flush) or implicit (the
 * checkpoint of a dirty checkout that fork, promote, rollback and compact take before they read the head): an agent
 * never writes into the way back of a protected branch without -allow-force. Returns the check, to run on the ref
 * read under the branch lease; `human` is the command the human would run instead.
 */
export function vetWrite(
  ctx: OpsContext,
  t: Target,
  actor: Actor,
  how: 'explicit' | 'implicit',
  human: string,
): (ref: Ref) => Promise<void> {
  const what =
    how === 'explicit' ? 'checkpointing into' : 'checkpointing the uncheckpointed writes of its checkout into';
  return (ref) => refuseUndoPointChange(ctx, t.db, t.branch, ref, actor, what, human);
}

/**
 * An agent's rollback of a protected branch keeps one undo point: a second rollback while the first one's undo point
 * exists would replace it, so it is left to the human (who keeps or drops it first).
 */
export async function refuseSecondRollback(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  actor: Actor,
): Promise<void> {
  if (unrestricted(actor) || !ref.protected) return;
  const undo = undoPointName(branch, 'pre-rollback');
  if ((await ctx.store.tryGetRef(db, undo)) === undefined) return;
  throw fail(
    'PROTECTED',
    `${db}@${branch} is protected and its undo point ${db}@${undo} from the last rollback still exists; a second rollback would replace it`,
    {
      ...agentHints(
        `ask the human to keep it ('${undoCommand(db, undo, branch, true)}') or drop it ('offshoot destroy ${db}@${undo} --force') first`,
      ),
    },
  );
}

/** Whether a TTL change brings the reap deadline earlier (or arms one where there was none). */
function shortens(ref: Ref, ttl: TtlArg, now: Date, liveness: Liveness): boolean {
  if (ttl.kind !== 'set') return false;
  const lease = leaseEnd(ref, liveness);
  const current = reapDeadline(ref.ttl, ref.touched_at, lease);
  if (current === undefined) return true;
  const next = reapDeadline(formatDuration(ttl.ttl), now.toISOString(), lease) as number;
  return next < current;
}

/**
 * The TTL rules of an agent's touch: it never sets or shortens the TTL of a protected branch (it would fire on the
 * human's next unprotect), nor shortens or clears one on the undo point of a protected branch without -allow-force.
 */
export async function refuseAgentTtl(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  ttl: TtlArg,
  actor: Actor,
): Promise<void> {
  if (actor.kind === 'human' || ttl.kind === 'keep') return;
  const liveness = await readLiveness(ctx, [ref]);
  if (ref.protected && shortens(ref, ttl, ctx.now(), liveness))
    throw fail('PROTECTED', `${db}@${branch} is protected; an agent cannot set or shorten its TTL`, {
      hint: `ask the human to run 'offshoot touch ${db}@${branch} --ttl <d>' if the branch should expire`,
    });
  if (ttl.kind === 'none' || shortens(ref, ttl, ctx.now(), liveness))
    await refuseUndoPointChange(
      ctx,
      db,
      branch,
      ref,
      actor,
      'shortening or clearing the TTL of',
      `offshoot touch ${db}@${branch} --ttl <d>`,
    );
}

/** An agent writes to a checkout only where it may checkpoint, and never discards uncheckpointed changes. */
export async function refuseAgentCheckout(
  ctx: OpsContext,
  db: string,
  branch: string,
  ref: Ref,
  actor: Actor,
  discard: boolean,
): Promise<void> {
  if (actor.kind === 'agent' && discard)
    throw fail('PROTECTED', `discarding the uncheckpointed changes of ${db}@${branch} is left to the human`, {
      hint: `checkpoint them first (offshoot checkpoint ${db}@${branch} NAME), or ask the human to run 'offshoot checkout ${db}@${branch} --discard'`,
      hints: {
        agent: `checkpoint them first (offshoot_checkpoint), or ask the human to run 'offshoot checkout ${db}@${branch} --discard'`,
        sdk: `checkpoint them first, or ask the human to run 'offshoot checkout ${db}@${branch} --discard'`,
      },
    });
  await refuseUndoPointChange(
    ctx,
    db,
    branch,
    ref,
    actor,
    'a writable checkout of',
    `offshoot checkout ${db}@${branch}`,
  );
}

/** Clearing protection is the human's call; an agent may only do it under -allow-force. */
export function refuseAgentUnprotect(db: string, branch: string, actor: Actor): void {
  if (unrestricted(actor)) return;
  throw fail('PROTECTED', `unprotecting ${db}@${branch} needs -allow-force, which this server was not started with`, {
    ...agentHints(`ask the human to run 'offshoot unprotect ${db}@${branch}'`),
  });
}

/**
 * A destroy discards what the branch's checkout holds that no checkpoint has: an agent needs force for that, and its
 * force counts only under -allow-force (a human goes ahead and is told what was discarded). `human` is the command
 * the human would run.
 */
export function refuseAgentDiscardingWork(
  db: string,
  branch: string,
  work: CheckoutWork | undefined,
  force: boolean,
  actor: Actor,
  human: string,
): void {
  if (work === undefined || actor.kind === 'human') return;
  const writes = work.reason === 'uncheckpointed_writes';
  const what = writes
    ? `${db}@${branch} holds writes no checkpoint has in its checkout; destroying it discards them`
    : `the checkout of ${db}@${branch} cannot be proven clean (it has no readable .sum sidecar); destroying it discards whatever it holds`;
  const them = writes ? 'them' : 'it';
  const keep = {
    cli: `checkpoint ${them} first (offshoot checkpoint ${db}@${branch} NAME)`,
    agent: `checkpoint ${them} first (offshoot_checkpoint)`,
  };
  if (!actor.allowForce)
    throw fail('PROTECTED', `${what}, which needs -allow-force, which this server was not started with`, {
      ...agentHints({
        cli: `${keep.cli}, or ask the human to run '${human}'`,
        agent: `${keep.agent}, or ask the human to run '${human}'`,
      }),
    });
  if (!force)
    throw fail('PROTECTED', `${what}, and needs force: true`, {
      hint: `${keep.cli}; ${PASS_FORCE.hint}`,
      hints: { agent: `${keep.agent}; ${PASS_FORCE.hints.agent}`, sdk: `${keep.agent}; ${PASS_FORCE.hints.sdk}` },
    });
}
