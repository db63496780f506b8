// Reads a Claude Code hook event on stdin and, when it applies, prints context for the model as hook JSON output.
// session-start: a reminder of the branch loop. pre-bash: a nudge when a shell command runs destructive SQL against
// a SQLite file, above all an offshoot checkout of main. Any problem means silence: a hook must never get in the way.
import { readFileSync } from 'node:fs';

// The rules-file snippet, on one line (the test checks it against the MCP server's copy).
const LOOP =
  'Database changes: this project uses offshoot. Before any schema migration, bulk delete, or data experiment, ' +
  "fork the database (offshoot_fork) and work in the fork's checkout; checkpoint when tests pass; roll back when " +
  "they fail; promote the fork that worked. Never run destructive SQL on main's checkout directly.";

const DESTRUCTIVE =
  /\b(drop\s+(table|index|view|trigger)|delete\s+from|truncate\s|alter\s+table|update\s+\S+\s+set|insert\s+(or\s+\w+\s+)?into|replace\s+into|vacuum)\b/i;
const SQLITE_TARGET = /(\bsqlite3\b|\.db\b|\.sqlite3?\b|checkouts\/)/i;

function emit(event, context) {
  process.stdout.write(
    `${JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: context } })}\n`,
  );
}

try {
  const mode = process.argv[2];
  const input = JSON.parse(readFileSync(0, 'utf8') || '{}');
  if (mode === 'session-start') {
    emit('SessionStart', LOOP);
  } else if (mode === 'pre-bash') {
    const command = String(input?.tool_input?.command ?? '');
    if (DESTRUCTIVE.test(command) && SQLITE_TARGET.test(command)) {
      const onMain = /checkouts\/[^/\s'"]+\/main\.db/.test(command);
      emit(
        'PreToolUse',
        (onMain
          ? "offshoot: this command runs destructive SQL on main's checkout. "
          : 'offshoot: this command runs destructive SQL on a SQLite file. ') +
          "If it is offshoot-managed, fork first (offshoot_fork), run it in the fork's checkout " +
          '(offshoot_checkout), checkpoint when tests pass, and promote the fork that worked.',
      );
    }
  }
} catch {
  // Silence, never an error: advice is optional.
}
