// zod/mini: the same validation with a fraction of the import cost, which every daemon start pays.
import type { EventType, WireRequest, WireResponse } from '@offshoot/client';
import { z } from 'zod/mini';

/** One op name (the client package owns the wire types; this layer validates and serves them). */
export type { Op } from '@offshoot/client';

/**
 * A request: one JSON object per line. `branch` doubles as the fork/promote source; `name` is the checkpoint, the
 * new branch, the promote target or the export/checkout-at checkpoint, depending on the op. Unknown fields are
 * ignored so newer clients keep working against this daemon.
 */
export const RequestSchema = z.object({
  op: z.string(),
  db: z.optional(z.string()),
  branch: z.optional(z.string()),
  name: z.optional(z.string()),
  from: z.optional(z.string()),
  ttl: z.optional(z.string()),
  force: z.optional(z.boolean()),
  path: z.optional(z.string()),
  meta: z.optional(z.record(z.string(), z.string())),
  /** Additive: the right-hand target of a diff op, as `db[@branch[@checkpoint]]`. */
  to: z.optional(z.string()),
  /** Additive: gc grace as a Go duration. */
  grace: z.optional(z.string()),
  /** Additive: ask diff for counts only. */
  summary: z.optional(z.boolean()),
  /** Additive: limit a diff to one table. */
  table: z.optional(z.string()),
  /** Additive: the store the client means (canonical spelling); a daemon serving another store refuses the request. */
  store: z.optional(z.string()),
  /** Additive: a batch fork's new branch names (instead of `name`), made all or nothing. */
  names: z.optional(z.array(z.string())),
  /** Additive: `agent` applies the agent rules; absent means a human. */
  actor: z.optional(z.literal('agent')),
  /** Additive: with `actor: "agent"`, the agent may force. */
  allow_force: z.optional(z.boolean()),
  /** Additive: checkout drops uncheckpointed writes and re-materializes the head. */
  discard: z.optional(z.boolean()),
  /** Additive: checkout answers the live path of a session open here on the branch. */
  live: z.optional(z.boolean()),
  /** Additive: the statement of a query op. */
  sql: z.optional(z.string()),
  /** Additive: the row limit of a query op; the most branches a branches op lists; a diff op's rows per table and kind. */
  limit: z.optional(z.number()),
  /** Additive: a branches op lists only branches in one of these states. */
  state: z.optional(z.array(z.string())),
  /** Additive: the verb a check op runs the refusals of (rollback, promote, destroy). */
  verb: z.optional(z.string()),
  /** Additive: a promote op (and a check of one) goes ahead only while the target's head is this txid (else BASE_MOVED). */
  if_head: z.optional(z.number()),
  /** Additive: a log op keeps the records at or after this time (RFC 3339). */
  since: z.optional(z.string()),
  /** Additive: a log op keeps this actor's records only. */
  by: z.optional(z.enum(['human', 'agent'])),
  /** Additive: who asked, for the branch log: the surface and the actor's tags. */
  origin: z.optional(z.object({ surface: z.optional(z.string()), meta: z.optional(z.record(z.string(), z.string())) })),
  /** Additive: a fork op's new branches are ephemeral, held by this daemon until kept (echoed in the answer). */
  ephemeral: z.optional(z.boolean()),
  /** Additive: the branch a merge op merges `branch` into. */
  into: z.optional(z.string()),
  /** Additive: how a merge op resolves conflicting rows (`source` or `target`); absent, conflicts change nothing. */
  prefer: z.optional(z.enum(['source', 'target'])),
  /**
   * Additive: a merge op's rows for conflicts: each the table and key of a conflicting row as the merge reports them,
   * and the full row to write there (null deletes it), values in diff's JSON encoding. Older daemons ignore it (and
   * report the conflicts, changing nothing).
   */
  resolved: z.optional(
    z.array(
      z.object({
        table: z.string(),
        key: z.record(z.string(), z.unknown()),
        row: z.nullable(z.record(z.string(), z.unknown())),
      }),
    ),
  ),
});

/** A parsed request. */
export type Request = z.infer<typeof RequestSchema>;

// The schema accepts exactly the fields the client's WireRequest declares: adding a field to one without the other
// fails to compile.
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false;
type Holds<T extends true> = T;
/** Compiles only while the schema and the client's WireRequest have the same fields. */
export type RequestFieldsMatch = Holds<SameKeys<Request, WireRequest>>;

export type {
  BranchInfo,
  CheckpointInfo,
  EventType,
  SessionInfo,
  UnreadableBranch,
  WireBranchInfo,
} from '@offshoot/client';

/** A response line: `ok` plus the op's result fields; on failure `error` (and, additively, `code` and `hint`). */
export type Response = WireResponse;

/**
 * The event envelope as the daemon publishes it: the client's envelope with the detail left open, since the bus
 * carries every event type.
 */
export interface EventEnvelope {
  v: 1;
  ts: string;
  type: EventType;
  db?: string;
  branch?: string;
  detail?: Record<string, unknown>;
}

/** The largest request line the daemon reads (larger ones are refused). */
export const MAX_REQUEST_BYTES = 1 << 20;
