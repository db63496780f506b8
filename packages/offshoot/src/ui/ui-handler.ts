import type { IncomingMessage, ServerResponse } from 'node:http';
import { fail } from '../core/errors.js';
import { nameProblem } from '../core/names.js';
import type { ApiSeries } from './api-types.js';
import { DiffPages, parseDiffQuery } from './diff-api.js';
import { mergePreview } from './merge-api.js';
import { sendJson } from '../protocol/http-kit.js';
import { secure, sendError } from './http-reply.js';
import { loadPageAssets } from './page-assets.js';
import { RefWatch } from '../ops/branch-view.js';
import { storageReport } from './storage-api.js';
import { branchDetail, branchLog, dbTree, listDbs } from './tree-api.js';
import type { LogOptions } from '../ops/log.js';
import { parseTime } from '../core/moment.js';
import { UiAuth } from './ui-auth.js';
import type { UiSource } from './ui-source.js';

const SSE_PING_MS = 15_000;
const SSE_WRITE_DEADLINE_MS = 45_000;

/** The dashboard's routes, mountable on any node:http server; `close` ends its event streams. */
export interface UiHandler {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  close(): void;
}

// Page URLs the single-page app answers; anything else is a 404, so no URL maps to a file a client names.
const PAGE_RE = /^\/(?:|db\/[^/]+(?:\/(?:branch\/[^/]+|storage))?|diff|storage)$/;

function segment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw fail('INVALID_ARGUMENT', `malformed URL segment ${JSON.stringify(s)}`, {
      hint: 'percent-encode names properly',
    });
  }
}

// `?children=0` leaves the branch's children out of its detail, sparing a read of every ref of the database.
function childrenWanted(url: URL): boolean {
  const v = url.searchParams.get('children');
  if (v === null || v === '1') return true;
  if (v === '0') return false;
  throw fail('INVALID_ARGUMENT', `children must be 0 or 1, got ${JSON.stringify(v)}`, {
    hint: 'send children=0 to leave the children out (they cost a read of every ref), or leave it off',
  });
}

// The filters of a log request: ?limit=N (0: all), ?since=<RFC 3339>, ?actor=human|agent.
function logQuery(url: URL): LogOptions {
  const limit = url.searchParams.get('limit');
  const since = url.searchParams.get('since');
  const actor = url.searchParams.get('actor');
  if (limit !== null && !/^[0-9]{1,9}$/.test(limit))
    throw fail('INVALID_ARGUMENT', `limit must be a whole number, got ${JSON.stringify(limit)}`, {
      hint: 'send limit=N (0 for every record), or leave it off',
    });
  if (actor !== null && actor !== 'human' && actor !== 'agent')
    throw fail('INVALID_ARGUMENT', `actor must be human or agent, got ${JSON.stringify(actor)}`, {
      hint: 'send actor=agent, or leave it off',
    });
  return {
    ...(limit !== null ? { limit: Number(limit) } : {}),
    ...(since !== null ? { since: parseTime(since, 'since') } : {}),
    ...(actor !== null ? { actor } : {}),
  };
}

// A tree URL's page reads the tree (and the branch's detail) first thing: named in a preload header, they are asked
// for while the page's script loads instead of after. Only valid names go into the header, as the page writes them.
function preloads(path: string): string | undefined {
  const m = /^\/db\/([^/]+)(?:\/branch\/([^/]+))?$/.exec(path);
  if (m === null) return undefined;
  // Names are a-z, 0-9, '-', '_' and '.': an escaped one is no name, and draws no preload.
  const [db, branch] = [m[1], m[2]];
  if (db === undefined || nameProblem(db) !== undefined) return undefined;
  const links = [`</api/dbs/${db}/tree>; rel=preload; as=fetch; crossorigin`];
  if (branch !== undefined && nameProblem(branch) === undefined)
    links.push(`</api/dbs/${db}/branches/${branch}?children=0>; rel=preload; as=fetch; crossorigin`);
  return links.join(', ');
}

/**
 * Builds the read-only dashboard over a source: GET only, the built page for view URLs, the JSON API under /api/,
 * every route behind the token (see UiAuth). Database, branch and checkpoint names in URLs are validated store names;
 * nothing a client sends is ever used as a file path.
 */
export function createUiHandler(src: UiSource, token: string): UiHandler {
  const assets = loadPageAssets();
  const auth = new UiAuth(token);
  const diffs = new DiffPages(src);
  const streams = new Set<ServerResponse>();
  const refs = new RefWatch(src.ctx);

  const refuse = (res: ServerResponse, api: boolean): void => {
    res.setHeader('WWW-Authenticate', 'Bearer realm="offshoot"');
    if (api) {
      sendError(
        res,
        fail('USAGE', 'missing or wrong token', {
          hint: 'send Authorization: Bearer <token>, or open the URL with ?token=<token> once',
        }),
        401,
      );
      return;
    }
    const text =
      'offshoot: a token is required. Open the URL that `offshoot ui` (or `serve -ui`) printed, ending in ?token=...\n';
    res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };

  // Daemon events as `data:` frames (the daemon's envelope, unchanged), and `event: refs` frames whenever the store's
  // refs change by any hand; a store at rest streams only the latter.
  const events = (req: IncomingMessage, res: ServerResponse): void => {
    const sub = src.live?.subscribe();
    streams.add(res);
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    let deadline: NodeJS.Timeout | undefined;
    const send = (chunk: string): void => {
      if (res.destroyed) return;
      if (!res.write(chunk) && deadline === undefined)
        deadline = setTimeout(() => res.destroy(), SSE_WRITE_DEADLINE_MS);
    };
    res.on('drain', () => {
      clearTimeout(deadline);
      deadline = undefined;
    });
    send(': connected\n\n');
    const ping = setInterval(() => send(': ping\n\n'), SSE_PING_MS);
    const unwatch = refs.subscribe(() => send(`event: refs\ndata: {"type":"refs_changed"}\n\n`));
    res.on('close', () => {
      clearInterval(ping);
      clearTimeout(deadline);
      unwatch();
      sub?.close();
      streams.delete(res);
    });
    if (sub === undefined) return;
    void (async () => {
      for await (const env of sub) send(`data: ${JSON.stringify(env)}\n\n`);
      if (!res.destroyed) res.end();
    })();
  };

  const api = async (path: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const parts = path.split('/').slice(2).map(segment);
    const [first, db, sub, branch] = parts;
    if (first === 'dbs' && parts.length === 1) return sendJson(res, 200, await listDbs(src));
    if (first === 'dbs' && db !== undefined && sub === 'tree' && parts.length === 3)
      return sendJson(res, 200, await dbTree(src, db));
    if (first === 'dbs' && db !== undefined && sub === 'storage' && parts.length === 3)
      return sendJson(res, 200, await storageReport(src, db));
    if (first === 'dbs' && db !== undefined && sub === 'branches' && branch !== undefined && parts.length === 4)
      return sendJson(res, 200, await branchDetail(src, db, branch, { children: childrenWanted(url) }));
    const branchLogRoute = first === 'dbs' && sub === 'branches' && parts.length === 5 && parts[4] === 'log';
    if (branchLogRoute && db !== undefined && branch !== undefined)
      return sendJson(res, 200, await branchLog(src, db, branch, logQuery(url)));
    if (first === 'storage' && parts.length === 1) return sendJson(res, 200, await storageReport(src));
    if (first === 'diff' && parts.length === 1)
      return sendJson(res, 200, await diffs.page(parseDiffQuery(url.searchParams)));
    if (first === 'merge' && parts.length === 1) return sendJson(res, 200, await mergePreview(src, url.searchParams));
    if (first === 'diff.sql' && parts.length === 1) {
      const q = parseDiffQuery(url.searchParams);
      const text = await diffs.sql(q);
      const name = `${q.left.db}-${q.left.branch}..${q.right.db}-${q.right.branch}.sql`;
      res.writeHead(200, {
        'Content-Type': 'application/sql; charset=utf-8',
        'Content-Disposition': `attachment; filename="${name}"`,
        'Content-Length': Buffer.byteLength(text),
      });
      res.end(text);
      return;
    }
    if (first === 'events' && parts.length === 1) return events(req, res);
    if (first === 'metrics' && parts[1] === 'series' && parts.length === 2) {
      if (src.live === undefined)
        throw fail('UNSUPPORTED', 'no metrics: this page is served from a store at rest', {
          hint: 'run offshoot serve -http 127.0.0.1:PORT -ui to see the daemon metrics',
        });
      const s = src.live.series();
      const body: ApiSeries = { interval_seconds: s.intervalSeconds, samples: s.samples };
      return sendJson(res, 200, body);
    }
    throw fail('NOT_FOUND', `no API route ${path}`, { hint: 'docs/ui.md lists the routes under /api/' });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    secure(res);
    const url = new URL(req.url ?? '/', 'http://offshoot');
    const path = url.pathname;
    const isApi = path.startsWith('/api/');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendError(
        res,
        fail('USAGE', `${req.method ?? '?'} is not allowed: the dashboard is read-only`, { hint: 'use GET' }),
        405,
      );
      return;
    }
    const asset = assets.files.get(path);
    const isPage = PAGE_RE.test(path);
    if (!isApi && asset === undefined && !isPage) {
      sendError(res, fail('NOT_FOUND', `no route ${path}`, { hint: 'open / for the dashboard' }));
      return;
    }
    if (isPage && url.searchParams.has('token') && auth.exchange(url, res)) return;
    if (!auth.authorized(req)) return refuse(res, isApi);
    try {
      if (isApi) return await api(path, url, req, res);
      const file = asset ?? assets.index;
      const link = asset === undefined ? preloads(path) : undefined;
      if (link !== undefined) res.setHeader('Link', link);
      res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.body.length });
      res.end(req.method === 'HEAD' ? undefined : file.body);
    } catch (err) {
      if (res.headersSent) res.destroy();
      else sendError(res, err);
    }
  };

  return {
    handle,
    close: () => {
      refs.stop();
      for (const res of streams) res.end();
    },
  };
}
