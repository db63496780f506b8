/** Options of a fork, in the saver's words. */
export interface BackendForkOptions {
  ttl?: string | undefined;
  from?: string | undefined;
  meta?: Record<string, string> | undefined;
}

/**
 * One branch as the saver drives it: a writable checkout at `path` plus the branch verbs. A daemon session and the
 * at-rest CLI each implement it; the saver's SQLite handle is closed around `rollback` and `destroy`.
 */
export interface BranchBackend {
  readonly mode: 'session' | 'at-rest';
  readonly db: string;
  readonly branch: string;
  /** The writable checkout; it can change on rollback. */
  readonly path: string;
  /** Makes the checkout durable, optionally as a named checkpoint; returns the txid. */
  flush(name: string, meta: Record<string, string> | undefined): Promise<number>;
  /** Forks this branch (its head, made durable first, or `from`) and opens the new branch the same way. */
  fork(newBranch: string, opts: BackendForkOptions): Promise<BranchBackend>;
  /** Repoints this branch at checkpoint `to`; the checkout is usable again afterwards even when this rejects. */
  rollback(to: string): Promise<void>;
  /** Makes this branch durable, then repoints `onto` at its head; returns the txid. */
  promote(onto: string, force: boolean): Promise<number>;
  /** Deletes the branch and releases everything; released even when the delete is refused. */
  destroy(force: boolean): Promise<void>;
  /** Releases the session or lease and any connection; the branch stays. */
  close(): Promise<void>;
}
