// The shape of a branch log record, types only and standing alone, so the dashboard's page shares it (ui/api-types).

/** What a log record says happened to a branch: one verb that changed its ref. */
export type LogOp =
  | 'create'
  | 'flush'
  | 'checkpoint'
  | 'fork'
  | 'rollback'
  | 'promote'
  | 'compact'
  | 'touch'
  | 'protect'
  | 'unprotect'
  | 'destroy'
  | 'reap'
  | 'merge';

/** Who asked: a human (the CLI, an SDK's own call) or an agent (the MCP server, an adapter that says so). */
export type LogActor = 'human' | 'agent';

/**
 * One entry of a branch's log, exactly as stored (in the ref's `log` tail, then in a log object). `seq` counts from 1
 * within one incarnation of the branch (its `log_id`); `lineage` and `txid_after` are the state the change left, so
 * any moment of the branch resolves from its records. Fields this build does not know are kept as they are.
 */
export interface LogRecord {
  seq: number;
  op: LogOp | (string & {});
  at: string;
  actor: LogActor;
  surface: string;
  lineage: string;
  txid_before: number;
  txid_after: number;
  /** The actor's tags (a `Meta`, spelled out here so the file needs nothing but itself). */
  meta?: Record<string, string>;
  /** The checkpoint a checkpoint or named flush made, the one a rollback went to, or the moment it named. */
  name?: string;
  /** Where the state came from: a fork's or promote's source (`db@branch@txid`), an undo point's branch. */
  from?: string;
  /** Pages and bytes of the head object a flush or checkpoint wrote. */
  pages?: number;
  bytes?: number;
  /** The TTL a touch set (`none`: cleared). */
  ttl?: string;
  /** The undo point a rollback or promote kept the previous head as. */
  undo?: string;
  [extra: string]: unknown;
}
