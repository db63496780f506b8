import { looksLikeMoment } from '../core/moment.js';
import { nameMap } from '../core/name-map.js';
import type { OffshootError } from '../core/errors.js';
import { formatTarget, type Target } from '../core/target.js';
import type { CheckoutResult } from '../ops/checkout.js';
import type { CheckpointResult } from '../ops/checkpoint.js';
import type { CompactResult } from '../ops/compact.js';
import type { CreateResult } from '../ops/create.js';
import type { DestroyResult } from '../ops/destroy.js';
import type { ForkManyResult, ForkResult } from '../ops/fork.js';
import type { GcReport } from '../ops/gc.js';
import { reapHoldText, undoCommand } from '../ops/branch-view.js';
import type { PostponedReap } from '../ops/reap.js';
import type { LeaseInfo } from '../ops/lease.js';
import type { JsonMerge, MergeResult } from '../ops/merge.js';
import type { PromoteResult } from '../ops/promote.js';
import type { ProtectResult } from '../ops/protect.js';
import type { QueryResult } from '../ops/query.js';
import type { RollbackResult } from '../ops/rollback.js';
import type { BranchStatus } from '../ops/branch-view.js';
import type { StatusTail } from '../ops/status.js';
import type { TouchResult } from '../ops/touch.js';
import type { UpgradeResult } from '../ops/upgrade.js';
import { renderDiffSummary, renderDiffText } from '../sqlite/diff/diff-format.js';
import { diffToJson } from '../sqlite/diff/diff-json.js';
import { renderDiffSql } from '../sqlite/diff/diff-sql.js';
import type { DiffResult } from '../sqlite/diff/diff-types.js';
import type { BranchInfo, SessionInfo, UnreadableBranch } from '../protocol/wire.js';
import type { Outcome } from './command.js';
import { EXIT } from './exit-codes.js';

// Every human stdout line below keeps the wording of the original CLI: scripts parse it.

/** A value emitted into JSON as is (keys not renamed): rows and other user-keyed data. */
class Verbatim {
  constructor(readonly value: unknown) {}
}

// Maps whose keys are user data (meta tags), never renamed.
const USER_KEYED = new Set(['meta']);

// The few distinct keys of a listing recur on every item: each is converted once (up to a bound, as a long-lived
// process may render keys that never recur).
const SNAKE_CASED = new Map<string, string>();
const SNAKE_CASED_MAX = 1024;

function snakeCase(key: string): string {
  let out = SNAKE_CASED.get(key);
  if (out === undefined) {
    out = key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
    if (SNAKE_CASED.size < SNAKE_CASED_MAX) SNAKE_CASED.set(key, out);
  }
  return out;
}

function hex(v: bigint): string {
  return v < 0n ? `-0x${(-v).toString(16)}` : `0x${v.toString(16)}`;
}

function jsonValue(v: unknown, renameKeys: boolean): unknown {
  if (typeof v === 'bigint') return hex(v);
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof Verbatim) return jsonValue(v.value, false);
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (Array.isArray(v)) return v.map((x) => jsonValue(x, renameKeys));
  // Keys may be user data (meta): `__proto__` is one like any other, not a prototype to set.
  const out = nameMap<unknown>();
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined) continue;
    out[renameKeys ? snakeCase(k) : k] = jsonValue(x, renameKeys && !USER_KEYED.has(k));
  }
  return out;
}

/** The one JSON document --json prints: camelCase keys become snake_case, bigints hex strings, undefined fields go. */
export function toJsonDocument(data: unknown): string {
  return JSON.stringify(jsonValue(data, true), null, 2);
}

/** One value as --json renders it (the same keys and values as in the document), on one line: a JSON Lines record. */
export function toJsonLine(data: unknown): string {
  return JSON.stringify(jsonValue(data, true));
}

function outcome(
  data: unknown,
  lines: string[] = [],
  extra: Pick<Outcome, 'notes' | 'problems' | 'warnings' | 'failure'> = {},
): Outcome {
  return { data, text: lines.join('\n'), ...extra };
}

// Go's %v of a string slice: [a b c].
function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}

// RFC 3339 at second precision, as the original printed lease times; an unparsable time is shown as stored.
function rfc3339(iso: string): string {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? new Date(t).toISOString().replace(/\.\d+Z$/, 'Z') : iso || '(none)';
}

/** `init`: the earlier implementation's line, and the layout the store was written at. */
export function initOutcome(spec: string, layout: number): Outcome {
  return outcome({ store: spec, initialized: true, layoutVersion: layout }, [`initialized store at ${spec}`]);
}

/** `upgrade`: what the layout was and is, and what it now allows. */
export function upgradeOutcome(r: UpgradeResult): Outcome {
  const what = r.upgraded
    ? `upgraded store at ${r.store} from layout ${r.from} to ${r.to}`
    : `store at ${r.store} is already at layout ${r.to}`;
  return outcome(r, [`${what} (${r.layout.allows})`]);
}

/** `create` prints nothing. */
export function createOutcome(r: CreateResult): Outcome {
  return outcome(r);
}

/** Commands whose stdout is one path: checkout, checkout --at, path, export. */
export function pathOutcome(data: { path: string } & Record<string, unknown>): Outcome {
  return outcome(data, [data.path]);
}

/** `checkout` (writable). */
export function checkoutOutcome(r: CheckoutResult): Outcome {
  const out = pathOutcome({ ...r });
  const t = r.path;
  if (r.dirty)
    out.warnings = [
      `${t} holds writes no checkpoint has recorded yet (kept): checkpoint to keep them, or check out with --discard to drop them`,
    ];
  return out;
}

/** `checkpoint`. */
export function checkpointOutcome(name: string, r: CheckpointResult): Outcome {
  return outcome({ ...r, name }, [`checkpoint ${JSON.stringify(name)} at txid ${r.txid}`]);
}

/** `fork`. */
export function forkOutcome(r: ForkResult): Outcome {
  return outcome(r, [`forked ${r.db}@${r.source} -> ${r.db}@${r.branch} at txid ${r.txid}`]);
}

/** `fork` of many names: one line per fork, as `fork` prints it. */
export function forkManyOutcome(r: ForkManyResult): Outcome {
  return outcome(
    r,
    r.branches.map((b) => `forked ${r.db}@${r.source} -> ${r.db}@${b} at txid ${r.txid}`),
  );
}

/**
 * `fork --ephemeral`, answered by the daemon: the lines `fork` prints, each saying the fork is ephemeral; the JSON is
 * what the daemon reports (no storage mode: it keeps that to itself).
 */
export function ephemeralForkOutcome(src: Target, names: readonly string[], txid: number): Outcome {
  const data =
    names.length === 1
      ? { db: src.db, source: src.branch, branch: names[0], txid, ephemeral: true }
      : { db: src.db, source: src.branch, branches: names, txid, ephemeral: true };
  return outcome(
    data,
    names.map(
      (b) =>
        `forked ${src.db}@${src.branch} -> ${src.db}@${b} at txid ${txid} (ephemeral: gone with its daemon unless kept)`,
    ),
  );
}

/** `touch`. */
export function touchOutcome(r: TouchResult): Outcome {
  return outcome(r, [`touched ${r.db}@${r.branch} ttl=${r.ttl ?? 'none'} touched_at=${r.touchedAt}`]);
}

/** `rollback`: stdout is the checkout path; what was abandoned and the exact undo command go to stderr. */
export function rollbackOutcome(r: RollbackResult, branchProtected: boolean): Outcome {
  const a = r.abandoned;
  const abandoned =
    a === undefined
      ? 'nothing abandoned'
      : a.from === a.to
        ? `abandoned txid ${a.from}`
        : `abandoned txids ${a.from}-${a.to}`;
  const { refreshError, ...rest } = r;
  const undo = undoCommand(r.db, r.backup, r.branch, branchProtected);
  const data = { ...rest, protected: branchProtected, undo };
  // A stale checkout's path would name a file holding the old state: print none, and fail with the refresh error.
  return outcome(refreshDocument(data, refreshError), refreshError ? [] : [r.path], {
    notes: [
      `rolled back ${r.db}@${r.branch} to ${looksLikeMoment(r.checkpoint) ? r.checkpoint : `checkpoint ${JSON.stringify(r.checkpoint)}`} at txid ${r.txid}; ${abandoned}`,
      `previous head kept as ${r.db}@${r.backup}; undo with '${undo}'`,
      ...earlierNote(r.db, r.branch, r.earlierBackup),
    ],
    ...(refreshError ? { failure: refreshError } : {}),
  });
}

// The note of an earlier undo point kept aside: it held the only copy of its state.
function earlierNote(db: string, branch: string, earlier: string | undefined): string[] {
  return earlier === undefined
    ? []
    : [`earlier undo point of ${db}@${branch} held the only copy of its state: kept as ${db}@${earlier}`];
}

// The JSON document of a repoint whose checkout could not be refreshed names the error beside the result.
function refreshDocument(data: Record<string, unknown>, err: OffshootError | undefined): Record<string, unknown> {
  if (!err) return data;
  return { ...data, refreshError: { code: err.code, message: err.message, hint: err.hint } };
}

/** `promote`. */
export function promoteOutcome(r: PromoteResult): Outcome {
  const { refreshError, ...data } = r;
  return outcome(
    refreshDocument(data, refreshError),
    [`promoted ${r.db}@${r.source} -> ${r.db}@${r.target} at txid ${r.txid}`],
    {
      notes: [
        `previous head of ${r.db}@${r.target} kept as ${r.db}@${r.backup}`,
        ...earlierNote(r.db, r.target, r.earlierBackup),
      ],
      ...(r.sourceLive
        ? {
            warnings: [
              `${r.db}@${r.source} has a live session no daemon here could flush: its last flushed head (txid ${r.txid}) was promoted, not its unflushed writes`,
            ],
          }
        : {}),
      ...(refreshError ? { failure: refreshError } : {}),
    },
  );
}

/** A row's key as text: `id=1`, `k='a' n=2`. */
function keyText(key: Readonly<Record<string, unknown>>): string {
  return Object.entries(key)
    .map(
      ([k, v]) =>
        `${k}=${typeof v === 'string' ? `'${v}'` : v instanceof Uint8Array ? `x'${Buffer.from(v).toString('hex')}'` : String(v)}`,
    )
    .join(' ');
}

/**
 * `merge`: what moved, per table; or the conflicts that stopped it (nothing changed), exiting 9 (MERGE_CONFLICT) so a
 * script can tell "resolve first" from success. The JSON is mergeToJson's, rows as diff's JSON has them.
 */
export function mergeOutcome(r: MergeResult, json: JsonMerge): Outcome {
  const from = `${r.db}@${r.source}`;
  const to = `${r.db}@${r.target}`;
  const tables = r.tables.map(
    (t) => `  ${t.table}: ${t.inserted} inserted, ${t.updated} updated, ${t.deleted} deleted`,
  );
  const conflicts = r.conflicts.map((c) => `  ${c.table} ${keyText(c.key)}: ${c.kind}`);
  if (!r.applied && r.conflicts.length > 0)
    return {
      ...outcome(new Verbatim(json), [
        `${from} -> ${to}: ${r.conflicts.length} conflicting row(s), nothing merged (base ${r.db}@${r.base.at})`,
        ...conflicts,
      ]),
      warnings: [
        `resolve with --prefer source or --prefer target, or give the rows to write with --resolve FILE (the --json report's table and key, and the row), or change the rows on one side and merge again (offshoot diff ${to} ${from} shows them)`,
      ],
      exitCode: EXIT.mergeConflict,
    };
  if (!r.applied) return outcome(new Verbatim(json), [`${to} already has every change of ${from} (nothing to merge)`]);
  const resolved = [
    ...(r.resolved !== undefined ? [`  ${r.resolved} conflict(s) resolved: the rows of --resolve written`] : []),
    ...(r.prefer !== undefined
      ? [`  ${r.conflicts.length - (r.resolved ?? 0)} conflict(s) resolved: ${r.prefer} kept`]
      : []),
  ];
  return outcome(
    new Verbatim(json),
    [
      `merged ${from} -> ${to} at txid ${r.txid} (checkpoint ${JSON.stringify(r.checkpoint)}, base ${r.db}@${r.base.at})`,
      ...tables,
      ...resolved,
    ],
    {
      notes: [`previous head of ${to} kept as ${r.db}@${r.backup}`, ...earlierNote(r.db, r.target, r.earlierBackup)],
    },
  );
}

/** `--check` of rollback, promote, merge or destroy: the call would go ahead now; nothing was changed. */
export function checkOutcome(verb: 'rollback' | 'promote' | 'merge' | 'destroy', t: Target): Outcome {
  return outcome({ verb, db: t.db, branch: t.branch, allowed: true }, [
    `${verb} of ${t.db}@${t.branch} would go ahead (checked only: nothing was changed)`,
  ]);
}

/** `compact`. */
export function compactOutcome(r: CompactResult): Outcome {
  return outcome(r, [`compacted ${r.db}@${r.branch} to txid ${r.txid}`]);
}

/** `destroy` prints nothing (what it discarded from the checkout the op warns of). */
export function destroyOutcome(r: DestroyResult): Outcome {
  return outcome(r);
}

/** `protect` / `unprotect`. */
export function protectOutcome(r: ProtectResult): Outcome {
  const t = `${r.db}@${r.branch}`;
  const word = r.protected ? 'protected' : 'unprotected';
  const out = outcome(r, [r.changed ? `${word} ${t}` : `${t} was already ${word}`]);
  if (r.expiresAt !== undefined)
    out.warnings = [`${t} has a TTL: unprotected, it expires at ${r.expiresAt} unless touched (offshoot touch ${t})`];
  return out;
}

/** One `status` line: `db@b state=S storage=... txid=N checkpoints=[..]` and the flags that apply. */
export function statusLine(b: BranchStatus): string {
  let line = `${b.db}@${b.branch} state=${b.state} storage=${b.storage} txid=${b.txid} checkpoints=[${b.checkpoints.join(',')}]`;
  if (b.protected) line += ' protected';
  if (b.checkedOut) line += ' checked-out';
  if (b.ttl) line += ` ttl=${b.ttl}` + (b.remaining ? ` remaining=${b.remaining}` : '');
  if (b.reapPostponed) line += ` reap-postponed=${b.reapPostponed}`;
  if (b.meta) line += ` meta=${JSON.stringify(b.meta)}`;
  return line;
}

/** What `status` prints after its branch lines: the count a limit left out, if any, then the ro-cache usage. */
export function statusTailLines(t: StatusTail): string[] {
  const { entries, bytes, budget } = t.roCache;
  return [
    ...(t.truncated === true ? [`more: ${t.more} more branches match; raise --limit to list them`] : []),
    `ro-cache: ${entries} entries, ${bytes} bytes used` +
      (budget ? `, budget ${budget} bytes` : ' (budget: unlimited)'),
  ];
}

/**
 * `status`, once the branches are printed: the store's layout as a note on stderr (stdout keeps the earlier
 * implementation's lines, for the scripts that parse them), each unreadable ref on stderr with its fix, and the
 * corrupt exit code.
 */
export function statusTailOutcome(t: StatusTail): Outcome {
  const layout =
    `store layout ${t.layout.version} (${t.layout.allows})` + (t.layout.upgrade ? `. ${t.layout.upgrade}` : '');
  return unreadableOutcome(
    { data: t, text: '', printed: true, notes: [layout] },
    t.unreadable.map((u) => `${u.error}${u.hint ? ` (${u.hint})` : ''}`),
  );
}

// A listing that skipped malformed refs: each named on stderr, and the corrupt exit code once everything printed.
function unreadableOutcome(out: Outcome, problems: string[]): Outcome {
  if (problems.length === 0) return out;
  return { ...out, problems: [...(out.problems ?? []), ...problems], exitCode: EXIT.corrupt };
}

/** How `diff` renders for people. */
export type DiffMode = 'text' | 'summary' | 'sql';

/** `diff`: header and rows (default), the table summary, or SQL turning left into right; labels are as typed. */
export function diffOutcome(r: DiffResult, left: string, right: string, mode: DiffMode): Outcome {
  const j = diffToJson(r);
  const text = (
    mode === 'summary'
      ? renderDiffSummary(r, left, right)
      : mode === 'sql'
        ? renderDiffSql(r)
        : renderDiffText(r, left, right)
  ).replace(/\n$/, '');
  // Under --sql the document also carries the script, exactly as the text form prints it.
  const data = {
    left,
    right,
    schema: j.schema,
    tables: new Verbatim(j.tables),
    stats: j.stats,
    summary_only: j.summary_only,
    ...(mode === 'sql' ? { sql: text } : {}),
  };
  return { data, text };
}

/** `query`: the column names, then a row per line (values as JSON); how many rows, and a cut, go to stderr. */
export function queryOutcome(r: QueryResult): Outcome {
  const target = `${r.db}@${r.branch}${r.at === undefined ? '' : `@${r.at}`}`;
  const lines = [r.columns.join(' | '), ...r.rows.map((row) => row.map((v) => JSON.stringify(v)).join(' | '))];
  const data = { ...r, rows: new Verbatim(r.rows) };
  return outcome(data, lines, {
    notes: [
      `${target} (${r.source}): ${r.rows.length} row(s)${r.truncated ? ', cut at the limit (raise --limit, or page with LIMIT/OFFSET)' : ''}`,
    ],
  });
}

/** A reap the checkout postponed, in words: what holds it and how it is settled. */
export function postponedLine(p: PostponedReap): string {
  const settle =
    p.reason === 'open_connection'
      ? 'it is reaped once that connection closes'
      : `checkpoint it ('offshoot checkpoint ${p.name} <name>') to keep the writes, or 'offshoot destroy ${p.name}' to discard them`;
  return `postponed the reap of ${p.name}: ${reapHoldText(p.reason)}; ${settle}`;
}

/** `gc`: reaped and cleared lists only when non-empty, then the object counts; reap failures go to stderr. */
export function gcOutcome(r: GcReport): Outcome {
  const lines: string[] = [];
  if (r.reaped.length > 0) lines.push(`gc: reaped ${goList(r.reaped)}`);
  if (r.clearedClaims.length > 0) lines.push(`gc: cleared stale delete claim(s) ${goList(r.clearedClaims)}`);
  lines.push(`gc: tombstoned ${r.tombstoned}, deleted ${r.deleted} objects`);
  const notes = r.postponed.map((p) => `gc: ${postponedLine(p)}`);
  if (r.roCachePruned > 0) notes.push(`gc: pruned ${r.roCachePruned} read-only cache entries no live branch uses`);
  if (r.temporaries > 0) notes.push(`gc: removed ${r.temporaries} temporaries left by writers that died`);
  return unreadableOutcome(
    outcome(r, lines, { notes, problems: r.reapErrors.map((e) => `gc: reap: ${e}`) }),
    r.unreadable.map((u) => `gc: ${u}; kept every object it may reach`),
  );
}

/** `lease list`. */
export function leaseListOutcome(leases: LeaseInfo[]): Outcome {
  const lines = leases.map(
    (l) =>
      `${l.db}@${l.branch} ${l.live ? 'held' : 'expired'} by ${l.holder} epoch=${l.epoch} until ${rfc3339(l.expiry)}`,
  );
  return outcome({ leases }, lines);
}

/** `lease acquire`: the lease lapses unless something renews it, which this command never does. */
export function leaseAcquireOutcome(
  t: Target,
  holder: string,
  r: { epoch: number; expiry: string; renewed: boolean },
): Outcome {
  const name = formatTarget(t);
  return outcome(
    { db: t.db, branch: t.branch, holder, ...r },
    [`acquired ${name} as ${holder} (epoch ${r.epoch}) until ${rfc3339(r.expiry)}`],
    {
      notes: ['this command exits immediately; the lease expires unless a long-running holder renews it'],
    },
  );
}

/** `lease release` prints nothing. */
export function leaseReleaseOutcome(t: Target): Outcome {
  return outcome({ db: t.db, branch: t.branch, released: true });
}

/** `session open`: the live checkout path. */
export function sessionOpenOutcome(t: Target, checkout: string, warnings: readonly string[] = []): Outcome {
  if (warnings.length === 0) return pathOutcome({ db: t.db, branch: t.branch, path: checkout });
  return outcome({ db: t.db, branch: t.branch, path: checkout, warnings: [...warnings] }, [checkout], {
    warnings: [...warnings],
  });
}

/** `session flush`. */
export function sessionFlushOutcome(t: Target, name: string | undefined, txid: number): Outcome {
  return outcome({ db: t.db, branch: t.branch, name, txid }, [`durable through txid ${txid}`]);
}

/** `session status`: one line per open session; failures are quoted since they hold spaces. */
export function sessionStatusOutcome(sessions: SessionInfo[]): Outcome {
  const lines = sessions.map((s) => {
    let line = `${s.db}@${s.branch} durable=${s.durable_txid} epoch=${s.epoch} holder=${s.holder} checkout=${s.checkout} lag=${s.capture_lag_bytes}`;
    if (s.last_flush_at) line += ` last_flush=${rfc3339(s.last_flush_at)}`;
    if (s.durable_age) line += ` age=${s.durable_age}`;
    if (s.flush_error) line += ` flush_error=${JSON.stringify(s.flush_error)}`;
    if (s.error) line += ` ERROR=${JSON.stringify(s.error)}`;
    // Appended, so scripts reading the original fields by position keep working.
    if (s.unflushed_bytes !== undefined) line += ` unflushed=${s.unflushed_bytes}`;
    if (s.evicted === true) line += ' evicted';
    if (s.ephemeral === true) line += ' ephemeral';
    return line;
  });
  return outcome({ sessions: new Verbatim(sessions) }, lines);
}

/** `session dbs`: one database per line. */
export function sessionDbsOutcome(databases: string[]): Outcome {
  return outcome({ databases }, databases);
}

/**
 * A branch the daemon listed, in the one branch shape of the CLI's JSON (that of `status --json`); the wire keeps
 * its own keys (`head_txid`, `shared`, `ttl_remaining`) for existing clients.
 */
function branchJson(db: string, b: BranchInfo): Record<string, unknown> {
  return {
    db,
    branch: b.branch,
    state: b.state,
    storage: b.shared ? 'shared' : 'materialized',
    txid: b.head_txid,
    checkpoints: b.checkpoints,
    checkpointsV2: b.checkpoints_v2.map((c) => ({ name: c.name, txid: c.txid, createdAt: c.created_at || undefined })),
    protected: b.protected,
    // The client reads a field the daemon left out as "": left out here too, as status --json leaves it out.
    ttl: b.ttl || undefined,
    remaining: b.ttl_remaining || undefined,
    expiresAt: b.expires_at,
    reapPostponed: b.reap_postponed,
    leaseHolder: b.lease_holder || undefined,
    touchedAt: b.touched_at || undefined,
    ephemeral: b.ephemeral === true ? true : undefined,
  };
}

/** `session branches`: one line per branch, as `status` prints them plus the daemon-only states. */
export function sessionBranchesOutcome(
  db: string,
  branches: BranchInfo[],
  unreadable: UnreadableBranch[] = [],
): Outcome {
  const lines = branches.map((b) => {
    let line = `${db}@${b.branch} state=${b.state} storage=${b.shared ? 'shared' : 'materialized'} txid=${b.head_txid} checkpoints=[${b.checkpoints.join(',')}]`;
    if (b.protected) line += ' protected';
    if (b.ttl) line += ` ttl=${b.ttl}` + (b.ttl_remaining ? ` remaining=${b.ttl_remaining}` : '');
    if (b.lease_holder) line += ` holder=${b.lease_holder}`;
    if (b.ephemeral === true) line += ' ephemeral';
    return line;
  });
  const data = {
    db,
    branches: branches.map((b) => branchJson(db, b)),
    unreadable: unreadable.map((u) => ({ db, ...u })),
  };
  return unreadableOutcome(
    outcome(data, lines),
    unreadable.map((u) => `daemon: ${u.error}`),
  );
}

/** `session close` and `session shutdown` print nothing. */
export function sessionDoneOutcome(data: Record<string, unknown>): Outcome {
  return outcome(data);
}

/** `version`. */
export function versionOutcome(version: string): Outcome {
  const data = { version, node: process.versions.node, os: process.platform, arch: process.arch };
  return outcome(data, [`offshoot ${version} node${data.node} ${data.os}/${data.arch}`]);
}

/** The one stderr line for a failure: `offshoot: <message> (<hint>)`, newlines folded so it stays one line. */
export function errorLine(err: OffshootError): string {
  const message = err.message.replace(/\s*\n\s*/g, ' ');
  return `offshoot: ${message}${err.hint ? ` (${err.hint})` : ''}`;
}

/** The one stderr JSON line for a failure under --json. */
export function errorJsonLine(err: OffshootError): string {
  const e = { code: err.code, message: err.message, hint: err.hint ?? null, retryable: err.retryable };
  // Additive: a refusal of an agent its human may lift says so, as on the wire.
  return JSON.stringify({ error: err.humanCanAllow ? { ...e, human_can_allow: true } : e });
}

/** A warning line for stderr: text, or a JSON object under --json. */
export function warningLine(message: string, json: boolean): string {
  return json ? JSON.stringify({ warning: { message } }) : `offshoot: warning: ${message}`;
}

/** A note line for stderr (text mode only). */
export function noteLine(message: string): string {
  return `offshoot: note: ${message}`;
}

/** A partial-failure line for stderr (text mode only; under --json it is part of the document). */
export function problemLine(message: string): string {
  return `offshoot: ${message}`;
}
