import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceTemplate,
  type Variables,
} from '@modelcontextprotocol/server';
import { asOffshootError, hintFor } from '../core/errors.js';
import { nameMap } from '../core/name-map.js';
import { type NameKind, nameProblem, validateName } from '../core/names.js';
import type { OpsContext } from '../ops/context.js';
import { query } from '../ops/query.js';
import { status } from '../ops/status.js';
import { branchView } from './tools/list.js';

// Branches as resources: offshoot://{database}, offshoot://{database}/{branch} (its status),
// offshoot://{database}/{branch}/schema (its CREATE statements) and offshoot://{database}/{branch}/checkpoint/{name}.

/** The URI of a database. */
export const databaseUri = (db: string): string => `offshoot://${db}`;
/** The URI of a branch's status. */
export const branchUri = (db: string, branch: string): string => `offshoot://${db}/${branch}`;
/** The URI of a branch's schema. */
export const schemaUri = (db: string, branch: string): string => `${branchUri(db, branch)}/schema`;
/** The URI of one checkpoint. */
export const checkpointUri = (db: string, branch: string, name: string): string =>
  `${branchUri(db, branch)}/checkpoint/${name}`;

/** True when a change of db@branch changes the resource at `uri` (the database, the branch, or anything under it). */
export function uriCovers(uri: string, db: string, branch: string): boolean {
  const b = branchUri(db, branch);
  return uri === databaseUri(db) || uri === b || uri.startsWith(`${b}/`);
}

/** The database an `offshoot://` resource URI names, or undefined when it names no resource of this server. */
export function uriDatabase(uri: string): string | undefined {
  const m = /^offshoot:\/\/([^/]+)(?:\/([^/]+)(?:\/schema|\/checkpoint\/([^/]+))?)?$/.exec(uri);
  if (m === null) return undefined;
  const names = [m[1], m[2], m[3]].filter((n): n is string => n !== undefined);
  return names.every((n) => nameProblem(n) === undefined) ? m[1] : undefined;
}

const MAX_COMPLETIONS = 100;
const JSON_TYPE = 'application/json';

function one(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/** A name from the URI, checked: an invalid one is the caller's error (invalid params), with a valid one named. */
function nameIn(v: Variables, kind: Extract<NameKind, 'database' | 'branch' | 'checkpoint'>): string {
  return validateName(kind, one(v[kind]));
}

function json(uri: URL, value: unknown): ReadResourceResult {
  return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(value, null, 2) }] };
}

/** The protocol's resource-not-found error (invalid params naming the URI), with the engine's code. */
function notFound(uri: URL, text: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, text, { uri: uri.href, code: 'NOT_FOUND' });
}

/**
 * A domain error as the protocol's: a missing branch is "resource not found", an invalid name invalid params, the
 * rest internal; each keeps its code and the hint in an agent's terms.
 */
function asProtocolError(uri: URL, err: unknown): ProtocolError {
  if (err instanceof ProtocolError) return err;
  const e = asOffshootError(err);
  const hint = hintFor(e, 'agent');
  const text = `${e.code}: ${e.message}${hint ? ` (hint: ${hint})` : ''}`;
  if (e.code === 'NOT_FOUND') return notFound(uri, text);
  if (e.code === 'INVALID_NAME' || e.code === 'INVALID_ARGUMENT')
    return new ProtocolError(ProtocolErrorCode.InvalidParams, text, { uri: uri.href, code: e.code });
  return new ProtocolError(ProtocolErrorCode.InternalError, text, { code: e.code });
}

async function guarded<T>(uri: URL, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asProtocolError(uri, err);
  }
}

/**
 * Registers the four resource templates, listed and readable, with completion of database, branch and checkpoint
 * names; `onListed` runs whenever a client lists them (so the server starts watching for list changes).
 */
export function registerResources(server: McpServer, open: () => Promise<OpsContext>, onListed: () => void): void {
  const report = async (db?: string) => status(await open(), db === undefined ? {} : { db });
  const listed = async (pick: (r: Awaited<ReturnType<typeof report>>) => Resource[]) => {
    onListed();
    try {
      return { resources: pick(await report()) };
    } catch {
      // No store yet (or it does not answer): nothing to list; reading says why.
      return { resources: [] };
    }
  };
  const complete = {
    database: async (value: string) => {
      const r = await report().catch(() => undefined);
      const dbs = [...new Set(r?.branches.map((b) => b.db) ?? [])];
      return dbs.filter((d) => d.startsWith(value)).slice(0, MAX_COMPLETIONS);
    },
    branch: async (value: string, ctx?: { arguments?: Record<string, string> }) => {
      const db = ctx?.arguments?.['database'];
      const r = await report(db).catch(() => undefined);
      const names = [...new Set(r?.branches.map((b) => b.branch) ?? [])];
      return names.filter((b) => b.startsWith(value)).slice(0, MAX_COMPLETIONS);
    },
    checkpoint: async (value: string, ctx?: { arguments?: Record<string, string> }) => {
      const db = ctx?.arguments?.['database'];
      const branch = ctx?.arguments?.['branch'];
      const r = await report(db).catch(() => undefined);
      const cps = (r?.branches ?? [])
        .filter((b) => branch === undefined || b.branch === branch)
        .flatMap((b) => b.checkpointsV2.map((c) => c.name));
      return [...new Set(cps)].filter((c) => c.startsWith(value)).slice(0, MAX_COMPLETIONS);
    },
  };

  server.registerResource(
    'database',
    new ResourceTemplate('offshoot://{database}', {
      list: () =>
        listed((r) =>
          [...new Set(r.branches.map((b) => b.db))].map((db) => ({
            uri: databaseUri(db),
            name: db,
            title: `database ${db}`,
            mimeType: JSON_TYPE,
          })),
        ),
      complete: nameMap({ database: complete.database }),
    }),
    { title: 'A database and its branches', description: 'Every branch of one database (JSON).', mimeType: JSON_TYPE },
    (uri, v) =>
      guarded(uri, async () => {
        const db = nameIn(v, 'database');
        const r = await report(db);
        if (r.branches.length === 0) throw notFound(uri, `NOT_FOUND: no database ${db}`);
        return json(uri, { db, branches: r.branches.map((b) => branchView(b, undefined)) });
      }),
  );

  server.registerResource(
    'branch',
    new ResourceTemplate('offshoot://{database}/{branch}', {
      list: () =>
        listed((r) =>
          r.branches.map((b) => ({
            uri: branchUri(b.db, b.branch),
            name: `${b.db}@${b.branch}`,
            title: `branch ${b.db}@${b.branch}`,
            mimeType: JSON_TYPE,
          })),
        ),
      complete: nameMap({ database: complete.database, branch: complete.branch }),
    }),
    {
      title: "A branch's status",
      description:
        'Head txid, checkpoints, protection, TTL and checkout state of one branch (JSON); subscribe to hear when it moves.',
      mimeType: JSON_TYPE,
    },
    (uri, v) =>
      guarded(uri, async () => {
        const db = nameIn(v, 'database');
        const branch = nameIn(v, 'branch');
        const b = (await report(db)).branches.find((x) => x.branch === branch);
        if (b === undefined) throw notFound(uri, `NOT_FOUND: no branch ${db}@${branch}`);
        return json(uri, branchView(b, undefined));
      }),
  );

  server.registerResource(
    'schema',
    new ResourceTemplate('offshoot://{database}/{branch}/schema', {
      list: () =>
        listed((r) =>
          r.branches.map((b) => ({
            uri: schemaUri(b.db, b.branch),
            name: `${b.db}@${b.branch} schema`,
            title: `schema of ${b.db}@${b.branch}`,
            mimeType: 'application/sql',
          })),
        ),
      complete: nameMap({ database: complete.database, branch: complete.branch }),
    }),
    {
      title: "A branch's schema",
      description: "The CREATE statements of a branch's head (its checkout when it has one).",
      mimeType: 'application/sql',
    },
    (uri, v) =>
      guarded(uri, async () => {
        const db = nameIn(v, 'database');
        const branch = nameIn(v, 'branch');
        const r = await query(
          await open(),
          { db, branch },
          "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
          { limit: 1000 },
        );
        const text = r.rows.map((row) => `${String(row[0])};\n`).join('');
        return { contents: [{ uri: uri.href, mimeType: 'application/sql', text }] };
      }),
  );

  server.registerResource(
    'checkpoint',
    new ResourceTemplate('offshoot://{database}/{branch}/checkpoint/{checkpoint}', {
      list: () =>
        listed((r) =>
          r.branches.flatMap((b) =>
            b.checkpointsV2.map((c) => ({
              uri: checkpointUri(b.db, b.branch, c.name),
              name: `${b.db}@${b.branch}@${c.name}`,
              title: `checkpoint ${c.name} of ${b.db}@${b.branch}`,
              mimeType: JSON_TYPE,
            })),
          ),
        ),
      complete: nameMap({ database: complete.database, branch: complete.branch, checkpoint: complete.checkpoint }),
    }),
    {
      title: 'A checkpoint',
      description: 'The txid, time and meta of one named checkpoint (JSON).',
      mimeType: JSON_TYPE,
    },
    (uri, v) =>
      guarded(uri, async () => {
        const db = nameIn(v, 'database');
        const branch = nameIn(v, 'branch');
        const name = nameIn(v, 'checkpoint');
        const b = (await report(db)).branches.find((x) => x.branch === branch);
        const c = b?.checkpointsV2.find((x) => x.name === name);
        if (c === undefined) throw notFound(uri, `NOT_FOUND: no checkpoint "${name}" on ${db}@${branch}`);
        return json(uri, {
          db,
          branch,
          name: c.name,
          txid: c.txid,
          created_at: c.createdAt ?? null,
          meta: c.meta ?? {},
        });
      }),
  );
}
