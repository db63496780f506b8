import { parseArgs, type ParseArgsConfig } from 'node:util';
import { fail } from '../core/errors.js';
import type { Actor } from '../ops/policy.js';
import type { FlagSpec, FlagValues } from './command.js';

/** Flags every command accepts, parsed alongside its own. */
const GLOBAL_FLAGS: Record<string, FlagSpec & { short?: string }> = {
  json: { type: 'boolean', description: 'print one JSON document on stdout; errors become one JSON line on stderr' },
  quiet: { type: 'boolean', description: 'no warnings, notes or progress on stderr (errors still print)' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
  actor: {
    type: 'string',
    value: 'WHO',
    description:
      "who asks: 'human' (default) or 'agent' (the agent rules: no force, undo points of protected branches left alone)",
  },
  'allow-force': {
    type: 'boolean',
    description: 'with --actor agent: the agent may force (as offshoot mcp -allow-force)',
  },
};

/** The global flags, for help text. */
export const globalFlags: Readonly<Record<string, FlagSpec>> = GLOBAL_FLAGS;

/** What parsing one command's argv gave. */
export interface ParsedCommandArgs {
  positionals: string[];
  flags: FlagValues;
  json: boolean;
  quiet: boolean;
  /** Who asks (--actor, --allow-force). */
  actor: Actor;
}

const END_OF_FLAGS = '--';

// `-at` and `-at=cp` are `--at` and `--at=cp`; one-letter flags (-h) and values like `-5s` keep their single dash.
function toDoubleDash(token: string): string {
  return /^-[A-Za-z][^=]/.test(token) ? `-${token}` : token;
}

function flagName(token: string): string | undefined {
  if (!token.startsWith('--') || token === END_OF_FLAGS) return undefined;
  const eq = token.indexOf('=');
  return eq < 0 ? token.slice(2) : token.slice(2, eq);
}

/**
 * Takes `-store SPEC` (one dash or two, `=` form too) out of argv wherever it appears before `--`; the last one wins.
 * A -store with nothing after it is a usage error.
 */
export function extractStore(argv: readonly string[]): { store: string | undefined; rest: string[] } {
  let store: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? '';
    if (token === END_OF_FLAGS) {
      rest.push(...argv.slice(i));
      break;
    }
    const t = toDoubleDash(token);
    if (t === '--store') {
      const value = argv[i + 1];
      if (value === undefined)
        throw fail('USAGE', 'flag --store needs a value', { hint: 'write --store PATH or --store s3://bucket/prefix' });
      store = value;
      i++;
    } else if (t.startsWith('--store=')) {
      store = t.slice('--store='.length);
    } else {
      rest.push(token);
    }
  }
  return { store, rest };
}

/** Removes and returns the first word (a token not starting with `-`) before `--`, e.g. the command name. */
export function takeWord(tokens: readonly string[]): { word: string | undefined; rest: string[] } {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] ?? '';
    if (t === END_OF_FLAGS) break;
    if (!t.startsWith('-') || t === '-') return { word: t, rest: [...tokens.slice(0, i), ...tokens.slice(i + 1)] };
  }
  return { word: undefined, rest: [...tokens] };
}

/** True when -h, -help or --help appears before `--`: help wins over every other check. */
export function wantsHelp(tokens: readonly string[]): boolean {
  for (const t of tokens) {
    if (t === END_OF_FLAGS) return false;
    if (t === '-h' || toDoubleDash(t) === '--help') return true;
  }
  return false;
}

/**
 * Rewrites single-dash flags to double-dash, and joins a value flag with a following value that merely starts with
 * a dash (`--ttl -5s` → `--ttl=-5s`) so the strict parser sees it as the value; a following known flag is left
 * alone so the parser reports the missing value.
 */
function normalize(tokens: readonly string[], flags: Record<string, FlagSpec>): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const raw = tokens[i] ?? '';
    if (raw === END_OF_FLAGS) {
      out.push(...tokens.slice(i));
      break;
    }
    const t = toDoubleDash(raw);
    out.push(t);
    const name = flagName(t);
    if (name === undefined || t.includes('=') || !Object.hasOwn(flags, name) || flags[name]?.type !== 'string')
      continue;
    const next = tokens[i + 1];
    if (next === undefined || !next.startsWith('-') || next === END_OF_FLAGS) continue;
    const nextName = flagName(toDoubleDash(next));
    if (
      next === '-h' ||
      (nextName !== undefined &&
        (Object.hasOwn(flags, nextName) || Object.hasOwn(GLOBAL_FLAGS, nextName) || nextName === 'store'))
    )
      continue;
    out[out.length - 1] = `${t}=${next}`;
    i++;
  }
  return out;
}

function usageError(err: unknown, command: string): Error {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  const flag = /'(-{1,2}[^' =]+)/.exec(message)?.[1] ?? '';
  const hint = command === '' ? `see 'offshoot --help'` : `see 'offshoot ${command} --help'`;
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
    return fail('USAGE', command === '' ? `unknown flag ${flag}` : `unknown flag ${flag} for ${command}`, { hint });
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (message.includes('does not take an argument')) return fail('USAGE', `flag ${flag} takes no value`, { hint });
    return fail('USAGE', `flag ${flag} needs a value`, { hint });
  }
  return fail('USAGE', message.split('\n')[0] ?? message, { hint });
}

// `--ttl "$TTL"` with TTL unset must not quietly mean "no TTL" (a fork that never expires): an empty value is never
// a value.
function refuseEmptyValues(values: Record<string, unknown>): void {
  for (const [name, v] of Object.entries(values)) {
    if (v !== '' && !(Array.isArray(v) && v.includes(''))) continue;
    throw fail('USAGE', `flag --${name} has an empty value`, {
      hint: `give --${name} a value or leave the flag out; is a shell variable unset?`,
    });
  }
}

/**
 * Parses a command's argv (command words already removed) against its flags plus the global ones, strictly;
 * `command` ('' before any command) names where usage errors point for help.
 */
export function parseCommandArgs(
  tokens: readonly string[],
  flags: Record<string, FlagSpec>,
  command: string,
): ParsedCommandArgs {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, spec] of Object.entries({ ...flags, ...GLOBAL_FLAGS })) {
    options[name] = {
      type: spec.type,
      ...(spec.multiple ? { multiple: true } : {}),
      ...('short' in spec && spec.short ? { short: spec.short } : {}),
    };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: normalize(tokens, flags), options, strict: true, allowPositionals: true });
  } catch (err) {
    throw usageError(err, command);
  }
  const values = parsed.values as Record<string, string | boolean | Array<string | boolean> | undefined>;
  refuseEmptyValues(values);
  const flagValues: FlagValues = {
    string: (name) => {
      const v = values[name];
      return typeof v === 'string' ? v : undefined;
    },
    boolean: (name) => values[name] === true,
    list: (name) => {
      const v = values[name];
      if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
      return typeof v === 'string' ? [v] : [];
    },
  };
  return {
    positionals: parsed.positionals,
    flags: flagValues,
    json: values.json === true,
    quiet: values.quiet === true,
    actor: actorOf(values.actor, values['allow-force'] === true),
  };
}

/** The actor the global flags name: a human unless `--actor agent`, whose `--allow-force` lets it force. */
function actorOf(value: unknown, allowForce: boolean): Actor {
  if (value === undefined || value === 'human') return { kind: 'human' };
  if (value === 'agent') return { kind: 'agent', allowForce };
  throw fail('USAGE', `--actor must be human or agent, not ${JSON.stringify(value)}`, {
    hint: "write '--actor agent' (or leave it out for a human)",
  });
}
