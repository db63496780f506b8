import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

// A client's answer to a request of ours (an elicitation under -confirm-force, a ping) must be an object. The SDK
// drops any other as an unparsable message, and the request it answers would wait out its timeout (ten minutes for a
// question to the human) with no word in any log. So such an answer is turned into the JSON-RPC error it amounts to
// before the SDK reads it: the call waiting on it fails closed at once, and the caller logs why.

/** The error response standing in for a malformed answer, and a line about it for the log; undefined for any other. */
function refusal(message: unknown): { error: object; line: string } | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const m = message as { jsonrpc?: unknown; id?: unknown; result?: unknown; method?: unknown };
  if (!('result' in m) || 'method' in m) return undefined;
  if (typeof m.id !== 'string' && typeof m.id !== 'number') return undefined;
  if (typeof m.result === 'object' && m.result !== null && !Array.isArray(m.result)) return undefined;
  const shown = JSON.stringify(m.result)?.slice(0, 80) ?? String(m.result);
  const why = `the client answered request ${JSON.stringify(m.id)} with ${shown}, not an object`;
  return {
    error: { jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `${why}: refused, nothing was changed` } },
    line: `offshoot: mcp: ${why}; the call waiting on it is refused`,
  };
}

/** A message (or batch) with each malformed answer replaced by its error response; `log` hears of each. */
export function refuseMalformedAnswers(message: unknown, log: (line: string) => void): unknown {
  if (Array.isArray(message)) return message.map((m) => refuseMalformedAnswers(m, log));
  const r = refusal(message);
  if (r === undefined) return message;
  log(r.line);
  return r.error;
}

/**
 * The stdio wire's input, line by line, with each malformed answer replaced by its error response (every other line
 * passes unchanged; only lines that carry a `"result"` are parsed here).
 */
export class MalformedAnswerFilter extends Transform {
  readonly #decoder = new StringDecoder('utf8');
  /** The start of a line not yet ended, in the pieces it came in (a long line is joined once, when it ends). */
  #partial: string[] = [];

  constructor(private readonly log: (line: string) => void) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const text = this.#decoder.write(chunk);
    const end = text.lastIndexOf('\n');
    if (end < 0) {
      this.#partial.push(text);
      done();
      return;
    }
    const lines = this.#partial.join('') + text.slice(0, end);
    this.#partial = [text.slice(end + 1)];
    done(
      null,
      Buffer.from(
        `${lines
          .split('\n')
          .map((l) => this.#line(l))
          .join('\n')}\n`,
      ),
    );
  }

  override _flush(done: TransformCallback): void {
    const rest = this.#partial.join('') + this.#decoder.end();
    done(null, rest === '' ? undefined : Buffer.from(this.#line(rest)));
  }

  #line(line: string): string {
    if (!line.includes('"result"')) return line;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return line;
    }
    const r = refusal(message);
    if (r === undefined) return line;
    this.log(r.line);
    return JSON.stringify(r.error);
  }
}
