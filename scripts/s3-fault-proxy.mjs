#!/usr/bin/env node
// An HTTP proxy in front of a test S3 server that misbehaves on request, for the S3 fault and probe suites.
//
//   node scripts/s3-fault-proxy.mjs UPSTREAM_URL [--strip-conditions]
//
// It listens on a free 127.0.0.1 port and prints "listening PORT" on stdout. --strip-conditions drops If-Match
// and If-None-Match from every request that no rule matches, like an endpoint that ignores conditional writes.
// Faults are set at run time through a control API on the same port:
//
//   PUT    /__proxy/rules   a JSON list of rules, replacing the current ones (first matching rule wins)
//   GET    /__proxy/log     every request seen so far: [{method, path, query, action}]
//   DELETE /__proxy/log     forget them
//   POST   /__proxy/release answer every response held by a holdHeaders rule
//
// A rule is {match, action, times?}. match: {method?, path? (substring), query? (substring)}. times: how often the
// rule fires (default: always). action is one of
//   {stripHeaders: [names]}           forward without these request headers
//   {status, code?, body?}            answer without forwarding (an S3 XML error unless body is given)
//   {cutAfterBytes: n}                forward, then drop both connections after n request-body bytes
//   {dropResponse: true}              forward in full, then drop the client connection instead of answering
//   {stallHeadersMs: ms}              forward, then hold the response headers for ms
//   {holdHeaders: true}               forward, then hold the response headers until POST /__proxy/release
//   {holdBody: {afterBytes}}          forward, send the first afterBytes of the response body, then hold the rest
//                                     until the client goes: only the client's own timeout can end its read
import http from 'node:http';

const [upstreamArg, ...flags] = process.argv.slice(2);
if (!upstreamArg) {
  process.stderr.write('usage: s3-fault-proxy.mjs UPSTREAM_URL [--strip-conditions]\n');
  process.exit(2);
}
const upstream = new URL(upstreamArg);
const CONDITIONS = ['if-match', 'if-none-match'];
const permanent = flags.includes('--strip-conditions') ? [{ match: {}, action: { stripHeaders: CONDITIONS } }] : [];
let rules = [];
let log = [];
/** Responses held by holdHeaders rules: each sends its held answer. */
const held = new Set();

const matches = (m, req, url) =>
  (m.method === undefined || m.method === req.method) &&
  (m.path === undefined || url.pathname.includes(m.path)) &&
  (m.query === undefined || url.search.includes(m.query));

function pickRule(req, url) {
  for (const rule of [...rules, ...permanent]) {
    if (rule.times !== undefined && rule.times <= 0) continue;
    if (!matches(rule.match ?? {}, req, url)) continue;
    if (rule.times !== undefined) rule.times--;
    return rule.action;
  }
  return undefined;
}

function control(req, res, url) {
  const reply = (status, value) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(value === undefined ? '' : JSON.stringify(value));
  };
  if (url.pathname === '/__proxy/log' && req.method === 'GET') return reply(200, log);
  if (url.pathname === '/__proxy/log' && req.method === 'DELETE') {
    log = [];
    return reply(204);
  }
  if (url.pathname === '/__proxy/release' && req.method === 'POST') {
    const sends = [...held];
    held.clear();
    for (const send of sends) send();
    return reply(200, { released: sends.length });
  }
  if (url.pathname === '/__proxy/rules' && req.method === 'PUT') {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      rules = JSON.parse(text);
      reply(204);
    });
    return undefined;
  }
  return reply(404, { error: `unknown control request ${req.method} ${url.pathname}` });
}

function errorXml(code, status) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code ?? `Injected${status}`}</Code><Message>injected by s3-fault-proxy</Message></Error>`;
}

function forward(req, res, url, action) {
  const headers = { ...req.headers, host: upstream.host };
  delete headers.connection;
  for (const name of action?.stripHeaders ?? []) delete headers[name];
  const up = http.request({
    host: upstream.hostname,
    port: upstream.port,
    method: req.method,
    path: url.pathname + url.search,
    headers,
    agent: false,
  });
  const dropBoth = () => {
    up.destroy();
    req.socket.destroy();
  };
  up.on('error', () => req.socket.destroy());
  up.on('response', (upRes) => {
    if (action?.dropResponse) {
      upRes.resume();
      upRes.on('end', () => req.socket.destroy());
      return;
    }
    const send = () => {
      const out = { ...upRes.headers };
      delete out.connection;
      res.writeHead(upRes.statusCode ?? 502, out);
      if (!action?.holdBody) {
        upRes.pipe(res);
        return;
      }
      streamThenHold(upRes, res, action.holdBody.afterBytes);
    };
    if (action?.stallHeadersMs) {
      const timer = setTimeout(send, action.stallHeadersMs);
      res.on('close', () => {
        clearTimeout(timer);
        upRes.destroy();
      });
    } else if (action?.holdHeaders) {
      held.add(send);
      res.on('close', () => {
        held.delete(send);
        upRes.destroy();
      });
    } else send();
  });

  if (action?.cutAfterBytes === undefined) {
    req.pipe(up);
    return;
  }
  let sent = 0;
  req.on('data', (chunk) => {
    if (sent + chunk.length > action.cutAfterBytes) {
      up.write(chunk.subarray(0, Math.max(0, action.cutAfterBytes - sent)));
      sent = action.cutAfterBytes;
      req.pause();
      setImmediate(dropBoth);
      return;
    }
    sent += chunk.length;
    up.write(chunk);
  });
  req.on('end', () => up.end());
}

// Sends the first afterBytes of src, then nothing more: the response is neither ended nor resumed, so the client
// sees a connection that stays open and stops delivering, however long it or this process takes to get there.
function streamThenHold(src, res, afterBytes) {
  let sent = 0;
  res.on('close', () => src.destroy());
  const onData = (chunk) => {
    const head = chunk.subarray(0, afterBytes - sent);
    sent += head.length;
    res.write(head);
    if (sent < afterBytes) return;
    src.off('data', onData);
    src.pause();
  };
  src.on('data', onData);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://proxy');
  if (url.pathname.startsWith('/__proxy/')) return control(req, res, url);
  const action = pickRule(req, url);
  const kind = action === undefined ? 'forward' : Object.keys(action)[0];
  log.push({ method: req.method, path: url.pathname, query: url.search, action: kind });
  if (action?.status !== undefined) {
    req.resume();
    req.on('end', () => {
      const body = action.body ?? errorXml(action.code, action.status);
      res.writeHead(action.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    return undefined;
  }
  return forward(req, res, url, action);
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
