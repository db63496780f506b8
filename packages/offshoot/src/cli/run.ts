import { asOffshootError, fail, type OffshootError } from '../core/errors.js';
import type { OpsContext } from '../ops/context.js';
import { resolveStoreSpec } from '../store/store-spec.js';
import { extractStore, parseCommandArgs, takeWord, wantsHelp } from './argv.js';
import type { Command, GlobalOptions, Invocation, Outcome } from './command.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { commandHelp, groupHelp, usageText } from './help.js';
import { errorJsonLine, errorLine, noteLine, problemLine, toJsonDocument, warningLine } from './output.js';
import { terminalProgress } from './progress.js';
import { versionCommand } from './commands/version.js';
import { findEntry, isGroup } from './registry.js';
import { cliRoCacheBudget, trimRoCache } from './ro-cache-budget.js';
import { cliOrigin } from './origin-env.js';

/** The process surroundings the CLI runs in; tests pass their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
}

type Resolved =
  | { kind: 'help'; text: string }
  | { kind: 'usage'; text: string }
  | { kind: 'command'; command: Command; tokens: string[] };

const VERSION_FLAGS = new Set(['--version', '-version']);

function resolveCommand(tokens: readonly string[]): Resolved {
  const { word, rest } = takeWord(tokens);
  if (word === undefined) {
    if (wantsHelp(rest)) return { kind: 'help', text: usageText() };
    const version = rest.filter((t) => VERSION_FLAGS.has(t));
    if (version.length > 0)
      return { kind: 'command', command: versionCommand, tokens: rest.filter((t) => !VERSION_FLAGS.has(t)) };
    // Only global flags may stand alone; anything else is a usage error. With no command at all, usage goes to
    // stderr and the exit code says nothing ran.
    parseCommandArgs(rest, {}, '');
    return { kind: 'usage', text: usageText() };
  }
  const entry = findEntry(word);
  if (entry === undefined) {
    throw fail('USAGE', `unknown command ${JSON.stringify(word)}`, { hint: "run 'offshoot --help' to list commands" });
  }
  if (!isGroup(entry))
    return wantsHelp(rest)
      ? { kind: 'help', text: commandHelp(entry) }
      : { kind: 'command', command: entry, tokens: rest };
  const sub = takeWord(rest);
  const names = entry.subcommands.map((c) => c.name.slice(entry.name.length + 1));
  if (sub.word === undefined) {
    if (wantsHelp(rest)) return { kind: 'help', text: groupHelp(entry) };
    throw fail('USAGE', `${entry.name} needs a subcommand: ${names.join(', ')}`, {
      hint: `see 'offshoot ${entry.name} --help'`,
    });
  }
  const command = entry.subcommands.find((c) => c.name === `${entry.name} ${sub.word}`);
  if (command === undefined) {
    throw fail('USAGE', `unknown ${entry.name} subcommand ${JSON.stringify(sub.word)}`, {
      hint: `use one of: ${names.join(', ')}`,
    });
  }
  return wantsHelp(sub.rest)
    ? { kind: 'help', text: commandHelp(command) }
    : { kind: 'command', command, tokens: sub.rest };
}

function checkArity(cmd: Command, positionals: readonly string[]): void {
  const { min, max } = cmd.args;
  if (positionals.length >= min && positionals.length <= max) return;
  const got =
    positionals.length > max ? `unexpected argument ${JSON.stringify(positionals[max])}` : 'missing arguments';
  throw fail('USAGE', `${got}; usage: offshoot ${cmd.name}${cmd.usage ? ` ${cmd.usage}` : ''}`, {
    hint: `see 'offshoot ${cmd.name} --help'`,
  });
}

function write(stream: NodeJS.WritableStream, line: string): void {
  stream.write(line.endsWith('\n') ? line : `${line}\n`);
}

// Resolves once the stream has taken the text, or has drained if it asked the writer to wait.
function printNow(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (stream.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

function printOutcome(io: CliIo, out: Outcome, globals: GlobalOptions): void {
  if (globals.json) {
    if (out.printed !== true) write(io.stdout, toJsonDocument(out.data));
    for (const w of out.warnings ?? []) write(io.stderr, warningLine(w, true));
    return;
  }
  if (out.text !== '' && out.printed !== true) write(io.stdout, out.text);
  for (const w of out.warnings ?? []) write(io.stderr, warningLine(w, false));
  for (const p of out.problems ?? []) write(io.stderr, problemLine(p));
  if (!globals.quiet) for (const n of out.notes ?? []) write(io.stderr, noteLine(n));
}

function printError(io: CliIo, err: OffshootError, json: boolean): void {
  const debug = io.env.OFFSHOOT_DEBUG === '1';
  const shown =
    err.code === 'INTERNAL' && err.hint === undefined && !debug
      ? fail('INTERNAL', err.message, {
          hint: 'this is a bug: rerun with OFFSHOOT_DEBUG=1 for a stack trace and report it',
        })
      : err;
  write(io.stderr, json ? errorJsonLine(shown) : errorLine(shown));
  if (err.code === 'INTERNAL' && debug) {
    const cause = err.cause instanceof Error ? err.cause : err;
    write(io.stderr, cause.stack ?? String(cause));
  }
}

// --json is honoured even for errors found before parsing gets that far.
function asksForJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((t) => t === '--json' || t === '-json');
}

/**
 * Runs one CLI invocation: argv → one command → output, returning the exit code. Errors become one stderr line
 * (or one JSON line under --json) and an exit code by error class; a stack is printed only for internal errors
 * and only with OFFSHOOT_DEBUG=1.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let json = asksForJson(argv);
  let ctx: OpsContext | undefined;
  try {
    const { store, rest } = extractStore(argv);
    const resolved = resolveCommand(rest);
    if (resolved.kind === 'help') {
      write(io.stdout, resolved.text);
      return EXIT.ok;
    }
    if (resolved.kind === 'usage') {
      write(io.stderr, resolved.text);
      return EXIT.usage;
    }
    const { command, tokens } = resolved;
    const parsed = parseCommandArgs(tokens, command.flags, command.name);
    json = parsed.json;
    const globals: GlobalOptions = { json: parsed.json, quiet: parsed.quiet };
    checkArity(command, parsed.positionals);
    const inv: Invocation = {
      args: parsed.positionals,
      flags: parsed.flags,
      arg: (i) => parsed.positionals[i] ?? '',
      actor: parsed.actor,
      origin: () => cliOrigin(parsed.actor.kind, io.env),
      json: parsed.json,
      print: (text) => printNow(io.stdout, text),
      storeSpec: () => resolveStoreSpec(store, io.env),
      storeNamed: store !== undefined || io.env.OFFSHOOT_STORE !== undefined,
      context: async () => {
        if (ctx === undefined) {
          const progress = globals.quiet ? undefined : await terminalProgress(io.stderr);
          const warn = (m: string) => {
            if (!globals.quiet) write(io.stderr, warningLine(m, globals.json));
          };
          // Loaded here: the store, and the hashing its checkout root may need, are no cost to help and version.
          const { openOpsContext } = await import('./store-context.js');
          ctx = await openOpsContext(
            resolveStoreSpec(store, io.env),
            io.env,
            { warn, progress },
            cliOrigin(parsed.actor.kind, io.env),
          );
        }
        return ctx;
      },
    };
    const budget = command.fillsRoCache ? cliRoCacheBudget(parsed.flags, io.env) : undefined;
    const out = await command.run(inv);
    if (budget !== undefined && ctx !== undefined) await trimRoCache(ctx, budget);
    printOutcome(io, out, globals);
    if (out.afterward !== undefined) {
      await out.afterward().catch((err: unknown) => {
        if (!globals.quiet) write(io.stderr, warningLine((err as Error).message, globals.json));
      });
    }
    if (out.failure !== undefined) {
      printError(io, out.failure, globals.json);
      return exitCodeFor(out.failure.code);
    }
    return out.exitCode ?? EXIT.ok;
  } catch (err) {
    const e = asOffshootError(err);
    printError(io, e, json);
    return exitCodeFor(e.code);
  } finally {
    if (ctx !== undefined) await ctx.store.close().catch(() => undefined);
  }
}
