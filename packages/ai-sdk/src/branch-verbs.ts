import type { CheckpointReport, DiffReport, QueryResult } from '@offshoot/client';

/** A fork as a tool asks for it: `source` (its head, or checkpoint `at`) into the new branch `branch`. */
export interface ForkRequest {
  db: string;
  source: string;
  branch: string;
  at?: string | undefined;
  /** A positive duration, or undefined for no TTL. */
  ttl?: string | undefined;
  meta?: Record<string, string> | undefined;
}

/** A branch's writable file, and whether a daemon session captures writes to it as they commit. */
export interface CheckoutFile {
  path: string;
  live: boolean;
}

/**
 * The verbs the tools call, each one client call (the daemon) or one CLI run (at rest). The mutations say that an
 * agent asks, so the engine applies its safety rules; nothing here decides what is allowed.
 */
export interface BranchVerbs {
  fork(req: ForkRequest): Promise<number>;
  checkout(db: string, branch: string): Promise<CheckoutFile>;
  checkpoint(
    db: string,
    branch: string,
    name: string,
    meta: Record<string, string> | undefined,
  ): Promise<CheckpointReport>;
  diff(left: string, right: string, summary: boolean): Promise<Pick<DiffReport, 'schema' | 'tables'>>;
  query(
    db: string,
    branch: string,
    sql: string,
    at: string | undefined,
    limit: number | undefined,
  ): Promise<QueryResult>;
  /** Returns the refreshed checkout path. */
  rollback(db: string, branch: string, to: string): Promise<string>;
  /** Returns the target's new txid; with `ifHead`, only while the target is still at that head (else BASE_MOVED). */
  promote(db: string, source: string, target: string, force: boolean, ifHead: number | undefined): Promise<number>;
  destroy(db: string, branch: string, force: boolean): Promise<void>;
  /** Whether the branch is protected (a missing branch reads as not protected). */
  isProtected(db: string, branch: string): Promise<boolean>;
}
