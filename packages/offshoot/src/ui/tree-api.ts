import { fail } from '../core/errors.js';
import { nameProblem, validateName } from '../core/names.js';
import {
  type BranchLineage,
  type BranchStatus,
  branchChain,
  parseParent,
  readsShared,
  treeEdges,
  undoCommand,
} from '../ops/branch-view.js';
import { type BranchView, branchView, scanStatus, status } from '../ops/status.js';
import type { Ref } from '../core/ref.js';
import type { VersionedRef } from '../store/store.js';
import type { SessionInfo } from '../protocol/wire.js';
import type {
  ApiBranch,
  ApiBranchDetail,
  ApiCommand,
  ApiDbs,
  ApiLog,
  ApiServer,
  ApiSession,
  ApiTree,
} from './api-types.js';
import { type LogOptions, logDocument, readLog } from '../ops/log.js';
import type { UiSource } from './ui-source.js';

/** Who serves the page, for every response's `server` field. */
export function serverInfo(src: UiSource): ApiServer {
  return {
    mode: src.live ? 'daemon' : 'at-rest',
    live: src.live !== undefined,
    version: src.version,
    store: src.storeLabel,
  };
}

function apiSession(s: SessionInfo): ApiSession {
  const out: ApiSession = {
    holder: s.holder,
    epoch: s.epoch,
    durable_txid: s.durable_txid,
    capture_lag_bytes: s.capture_lag_bytes,
  };
  if (s.last_flush_at !== undefined) out.last_flush_at = s.last_flush_at;
  if (s.durable_age !== undefined) out.durable_age = s.durable_age;
  if (s.flush_error !== undefined) out.flush_error = s.flush_error;
  if (s.error !== undefined) out.error = s.error;
  return out;
}

function apiBranch(src: UiSource, b: BranchStatus, sessions: Map<string, SessionInfo>): ApiBranch {
  const out: ApiBranch = {
    branch: b.branch,
    state: src.live ? src.live.state(b.db, b.branch, b.state) : b.state,
    storage: b.storage,
    head_txid: b.txid,
    protected: b.protected,
    checked_out: b.checkedOut,
    expired: b.remaining === 'expired',
    checkpoints: b.checkpointsV2.map((c) => ({
      name: c.name,
      txid: c.txid,
      ...(c.createdAt !== undefined ? { created_at: c.createdAt } : {}),
      ...(c.meta !== undefined ? { meta: c.meta } : {}),
    })),
  };
  if (b.ephemeral) out.ephemeral = true;
  if (b.ttl !== undefined) out.ttl = b.ttl;
  if (b.remaining !== undefined) out.remaining = b.remaining;
  if (b.expiresAt !== undefined) out.expires_at = b.expiresAt;
  if (b.reapPostponed !== undefined) out.reap_postponed = b.reapPostponed;
  if (b.undo !== undefined) out.undo = b.undo;
  const p = parseParent(b.parent);
  if (p !== undefined) out.parent = { db: p.db, branch: p.branch, txid: p.txid };
  if (b.leaseHolder !== undefined) out.lease_holder = b.leaseHolder;
  if (b.leaseExpiry !== undefined) out.lease_expiry = b.leaseExpiry;
  if (b.touchedAt !== undefined) out.touched_at = b.touchedAt;
  if (b.meta !== undefined) out.meta = b.meta;
  const s = sessions.get(b.branch);
  if (s !== undefined) out.session = apiSession(s);
  return out;
}

function sessionsOf(src: UiSource, db: string): Map<string, SessionInfo> {
  return new Map((src.live?.sessions() ?? []).filter((s) => s.db === db).map((s) => [s.branch, s]));
}

// Every branch of a database, by name; `seen` is also handed each one's ref.
async function dbBranches(
  src: UiSource,
  db: string,
  seen?: (b: BranchStatus, ref: Ref) => void,
): Promise<BranchStatus[]> {
  validateName('database', db);
  const branches: BranchStatus[] = [];
  await scanStatus(src.ctx, { db }, (b, ref) => {
    branches.push(b);
    seen?.(b, ref);
  });
  if (branches.length === 0)
    throw fail('NOT_FOUND', `database ${db} not found`, { hint: 'GET /api/dbs lists the databases' });
  return branches.sort((a, b) => a.branch.localeCompare(b.branch));
}

/** GET /api/dbs: every database with its branch and open-session counts. */
export async function listDbs(src: UiSource): Promise<ApiDbs> {
  const report = await status(src.ctx);
  const sessions = src.live?.sessions() ?? [];
  const counts = new Map<string, number>();
  for (const b of report.branches) counts.set(b.db, (counts.get(b.db) ?? 0) + 1);
  return {
    server: serverInfo(src),
    dbs: [...counts.entries()]
      .map(([name, branches]) => ({ name, branches, sessions: sessions.filter((s) => s.db === name).length }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/**
 * GET /api/dbs/:db/tree: every branch of a database as a node (with whether it reads objects another branch reads),
 * and fork, promote and undo edges.
 */
export async function dbTree(src: UiSource, db: string): Promise<ApiTree> {
  const lineages: BranchLineage[] = [];
  const branches = await dbBranches(src, db, (b, ref) =>
    lineages.push({ branch: b.branch, lineage: ref.lineage, base: ref.base }),
  );
  const sessions = sessionsOf(src, db);
  const sharing = await readsShared(src.ctx.store, lineages);
  return {
    server: serverInfo(src),
    db,
    now: src.ctx.now().toISOString(),
    branches: branches.map((b) => ({ ...apiBranch(src, b, sessions), reads_shared: sharing.has(b.branch) })),
    edges: treeEdges(branches),
  };
}

/**
 * The CLI commands a user might run next on a branch, ready to paste and run as they are: a promote carries the
 * --force its target needs. `protectedByBranch` maps each branch of the database to its protected flag.
 */
export function nextCommands(db: string, b: ApiBranch, protectedByBranch: ReadonlyMap<string, boolean>): ApiCommand[] {
  const t = `${db}@${b.branch}`;
  const onto = (target: string) => `--onto ${target}${protectedByBranch.get(target) === true ? ' --force' : ''}`;
  const latest = b.checkpoints.at(-1)?.name;
  const cmds: ApiCommand[] = [
    { label: 'check out', command: `offshoot checkout ${t}` },
    { label: 'checkpoint', command: `offshoot checkpoint ${t} NAME` },
    { label: 'fork', command: `offshoot fork ${t} NEW-BRANCH --ttl 1h` },
  ];
  if (latest !== undefined)
    cmds.push({ label: `roll back to ${latest}`, command: `offshoot rollback ${t} --to ${latest}` });
  const hasMain = b.branch !== 'main' && protectedByBranch.has('main');
  if (hasMain) cmds.push({ label: 'promote onto main', command: `offshoot promote ${t} ${onto('main')}` });
  if (b.undo !== undefined && protectedByBranch.has(b.undo.of))
    cmds.push({
      label: `undo: restore ${b.undo.of}`,
      command: undoCommand(db, b.branch, b.undo.of, protectedByBranch.get(b.undo.of) === true),
    });
  if (hasMain) cmds.push({ label: 'diff against main', command: `offshoot diff ${db}@main ${t}` });
  cmds.push(
    b.protected
      ? { label: 'unprotect', command: `offshoot unprotect ${t}` }
      : { label: 'protect', command: `offshoot protect ${t}` },
  );
  if (b.ttl !== undefined) cmds.push({ label: 'keep alive', command: `offshoot touch ${t}` });
  if (!b.protected) cmds.push({ label: 'destroy', command: `offshoot destroy ${t}` });
  if (b.session !== undefined) cmds.push({ label: 'flush session', command: `offshoot session flush ${t}` });
  return cmds;
}

/** What a branch panel asks for besides the branch itself. */
export interface BranchDetailOptions {
  /** Include `children`: a read of every ref of the database (the page takes them from the tree it has instead). */
  children: boolean;
}

// The branch, and the protected flag of each branch its commands may target (itself, main, the branch an undo point
// restores): from every ref of the database when the children are asked for anyway, else from those refs alone.
async function panelBranches(
  src: UiSource,
  db: string,
  branch: string,
  children: boolean,
): Promise<{ b: BranchStatus; got?: VersionedRef; all?: BranchStatus[]; protectedBy: Map<string, boolean> }> {
  const missing = () =>
    fail('NOT_FOUND', `branch ${db}@${branch} not found`, { hint: `GET /api/dbs/${db}/tree lists its branches` });
  if (children) {
    const all = await dbBranches(src, db);
    const b = all.find((x) => x.branch === branch);
    if (b === undefined) throw missing();
    return { b, all, protectedBy: new Map(all.map((x) => [x.branch, x.protected])) };
  }
  validateName('database', db);
  const stateOf = src.live?.state.bind(src.live);
  const view = await branchView(src.ctx, db, branch, stateOf);
  if (view === undefined) {
    if ((await src.ctx.store.listBranches(db)).length === 0)
      throw fail('NOT_FOUND', `database ${db} not found`, { hint: 'GET /api/dbs lists the databases' });
    throw missing();
  }
  const of = view.status.undo?.of;
  const targets = new Set(['main', ...(of !== undefined && nameProblem(of) === undefined ? [of] : [])]);
  targets.delete(branch);
  const others = await Promise.all([...targets].map((t) => branchView(src.ctx, db, t, stateOf)));
  const found = [view, ...others].filter((v): v is BranchView => v !== undefined);
  return {
    b: view.status,
    got: view.got,
    protectedBy: new Map(found.map((v) => [v.status.branch, v.status.protected])),
  };
}

/**
 * GET /api/dbs/:db/branches/:branch: the node, its ref fields, its head chain and the next CLI commands, and with
 * `children`, the edges to the branches made from it. Without them it reads the branch's ref and those of the
 * branches its commands target, not every ref of the database.
 */
export async function branchDetail(
  src: UiSource,
  db: string,
  branch: string,
  opts: BranchDetailOptions = { children: true },
): Promise<ApiBranchDetail> {
  validateName('branch', branch);
  const { b, got, all, protectedBy } = await panelBranches(src, db, branch, opts.children);
  const node = apiBranch(src, b, sessionsOf(src, db));
  const chain = await branchChain(src.ctx, db, branch, undefined, got);
  return {
    server: serverInfo(src),
    db,
    branch: node,
    ref: {
      lineage: chain.ref.lineage,
      epoch: chain.ref.epoch,
      head_epoch: chain.ref.head_epoch,
      ...(chain.ref.base ? { base: chain.ref.base } : {}),
    },
    chain: {
      members: chain.members.map((m) => ({
        key: m.key,
        lineage: m.lineage,
        kind: m.kind,
        min_txid: m.minTxid,
        max_txid: m.maxTxid,
        bytes: m.size ?? 0,
      })),
      bytes: chain.bytes,
      lineages: chain.lineages,
    },
    ...(all !== undefined ? { children: treeEdges(all).filter((e) => e.from === branch) } : {}),
    commands: nextCommands(db, node, protectedBy),
    history: await branchLog(src, db, branch, { limit: HISTORY_IN_PANEL }, chain.ref),
  };
}

/** The records of a branch's history the panel shows: the newest ones. */
export const HISTORY_IN_PANEL = 50;

/** A branch's log, as `offshoot log --json` prints it. */
export async function branchLog(
  src: UiSource,
  db: string,
  branch: string,
  opts: LogOptions,
  ref?: Ref,
): Promise<ApiLog> {
  return logDocument(await readLog(src.ctx, { db, branch }, opts, ref)) as unknown as ApiLog;
}
