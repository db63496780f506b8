import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';

/**
 * A Node request as the web-standard Request the MCP SDK's HTTP entries take: the same method, URL and headers,
 * the body already read (`body`), and a signal that aborts when the client goes away before the response is done
 * (so a 2026-07-28 call is cancelled the way its client cancels it: by dropping the request).
 */
export function toWebRequest(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort(new Error('the client closed the connection'));
  });
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    ...(body !== undefined && req.method !== 'GET' && req.method !== 'HEAD' ? { body } : {}),
    signal: gone.signal,
  });
}

/** Writes a web-standard Response to a Node response, streaming its body (an SSE stream stays open) until done. */
export function sendWebResponse(res: ServerResponse, response: Response): void {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  res.flushHeaders();
  const body = Readable.fromWeb(response.body as ReadableStream<Uint8Array>);
  // A client that goes away cancels the stream, so the SDK tears down what it held open for it.
  res.once('close', () => body.destroy());
  body.on('error', () => res.destroy());
  body.pipe(res);
}
