import { fail } from './errors.js';

/** A duration in nanoseconds, as Go's time.Duration (int64). */
export type Duration = bigint;

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_DURATION = (1n << 63n) - 1n;

function invalid(text: string): Error {
  return fail('INVALID_ARGUMENT', `invalid duration ${JSON.stringify(text)}`, {
    hint: 'use Go duration syntax such as 90s, 15m, 1h30m or 24h',
  });
}

/** Parses a Go-syntax duration (`1h30m`, `1.5h`, `300ms`, `-2s`, `0`) into nanoseconds. */
export function parseDuration(text: string): Duration {
  let s = text;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid(text);
  let total = 0n;
  const re = /^([0-9]*)(?:\.([0-9]*))?([a-z\u00b5\u03bc]+)/;
  while (s.length > 0) {
    const m = re.exec(s);
    if (!m) throw invalid(text);
    const whole = m[1] ?? '';
    const frac = m[2];
    const unitName = m[3] ?? '';
    if (whole === '' && (frac === undefined || frac === '')) throw invalid(text);
    const unit = UNITS[unitName];
    if (unit === undefined) throw invalid(text);
    let v = BigInt(whole === '' ? '0' : whole) * unit;
    if (frac) {
      // Go truncates the fractional part towards zero at nanosecond resolution.
      v += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    }
    total += v;
    if (total > MAX_DURATION) throw invalid(text);
    s = s.slice(m[0].length);
  }
  return neg ? -total : total;
}

function fracDigits(v: bigint, prec: number): { int: bigint; frac: string } {
  const base = 10n ** BigInt(prec);
  const int = v / base;
  let frac = (v % base).toString().padStart(prec, '0').replace(/0+$/, '');
  if (frac !== '') frac = '.' + frac;
  return { int, frac };
}

/** Renders nanoseconds exactly as Go's Duration.String does (`1h0m0s`, `1.5s`, `300ms`). */
export function formatDuration(d: Duration): string {
  if (d === 0n) return '0s';
  const neg = d < 0n;
  const u = neg ? -d : d;
  let out: string;
  if (u < 1_000_000_000n) {
    if (u < 1_000n) out = `${u}ns`;
    else if (u < 1_000_000n) {
      const f = fracDigits(u, 3);
      out = `${f.int}${f.frac}µs`;
    } else {
      const f = fracDigits(u, 6);
      out = `${f.int}${f.frac}ms`;
    }
  } else {
    const f = fracDigits(u, 9);
    let secs = f.int;
    const s = secs % 60n;
    secs /= 60n;
    out = `${s}${f.frac}s`;
    if (secs > 0n) {
      const m = secs % 60n;
      secs /= 60n;
      out = `${m}m${out}`;
      if (secs > 0n) out = `${secs}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

/** Converts a duration to whole milliseconds (truncating), for timers and clock arithmetic. */
export function durationMs(d: Duration): number {
  return Number(d / 1_000_000n);
}

/** Converts milliseconds to a Duration. */
export function msDuration(ms: number): Duration {
  return BigInt(Math.trunc(ms)) * 1_000_000n;
}

/** A parsed TTL argument: a positive duration, `none` (clear), or absent (keep). */
export type TtlArg = { kind: 'keep' } | { kind: 'none' } | { kind: 'set'; ttl: Duration };

/**
 * The one TTL grammar every surface (CLI, daemon, MCP, SDKs) parses with: absent or empty keeps the TTL; `none`
 * clears it, and so does a zero duration (`0`, `0s`), as the earlier CLI did; a positive Go duration sets it; a
 * negative one is refused. A fork's TTL (`fork`) is set or absent: zero is refused there, and `none` too unless
 * `allowNone` (MCP's `none`: no default TTL). `allowZeroAsNone` is accepted for earlier callers and changes nothing.
 */
export function parseTtl(
  text: string | undefined,
  opts: { allowZeroAsNone?: boolean; allowNone?: boolean; fork?: boolean } = {},
): TtlArg {
  if (text === undefined || text === '') return { kind: 'keep' };
  const fork = opts.fork === true || opts.allowNone === false;
  const noneAllowed = !fork || opts.allowNone === true;
  if (text === 'none') {
    if (!noneAllowed) {
      throw fail('INVALID_ARGUMENT', `invalid ttl "none": a fork's TTL must be positive`, {
        hint: 'leave the TTL out for a branch that never expires',
      });
    }
    return { kind: 'none' };
  }
  const d = parseDuration(text);
  if (d === 0n && !fork) return { kind: 'none' };
  if (d <= 0n) {
    throw fail('INVALID_ARGUMENT', `invalid ttl ${JSON.stringify(text)}: must be positive`, {
      hint: noneAllowed ? 'use a positive duration such as 1h, or none' : 'use a positive duration such as 1h',
    });
  }
  return { kind: 'set', ttl: d };
}
