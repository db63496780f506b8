/** The rules-file snippet for AGENTS.md / CLAUDE.md; docs/mcp.md and the plugin's skill carry the same text. */
export const RULES_SNIPPET = [
  'Database changes: this project uses offshoot. Before any schema migration,',
  'bulk delete, or data experiment, fork the database (offshoot_fork) and work',
  "in the fork's checkout; checkpoint when tests pass; roll back when they",
  "fail; promote the fork that worked. Never run destructive SQL on main's",
  'checkout directly.',
].join('\n');

/** The six-step loop and its rules, as the offshoot-loop prompt and the server instructions state them. */
export const LOOP_STEPS = [
  '1. Look: offshoot_list (and offshoot_query) to see the databases, branches and data before touching anything.',
  '2. Fork: offshoot_fork a branch for this attempt (it expires by TTL unless you say otherwise).',
  "3. Work: offshoot_checkout the fork and write only to that file, with any SQLite client; never to main's checkout.",
  '4. Checkpoint: offshoot_checkpoint when tests pass; roll back with offshoot_rollback when they fail.',
  '5. Compare: offshoot_diff the fork against main (or two attempts against each other) to see what really changed.',
  "6. Promote: offshoot_promote the attempt that worked. Promoting onto main (protected) is the human's call: when",
  '   it is refused, give the human the exact command from the result; do not retry with force.',
].join('\n');

/** The rules that go with the loop. */
export const LOOP_RULES = [
  'Rules: a refusal is a tool result, not a bug: read its hint and follow it. No tool opens or closes a daemon',
  'session; if a branch has a session open, ask the human to close it before rollback, promote onto it or destroy.',
  "Rollback keeps '<branch>-pre-rollback' as the undo point (reported as backup); leave the undo points of",
  'protected branches to the human. Destroy the forks you abandon, or let them expire. offshoot_log says what was',
  "done to a branch, when and by whom; a txid it shows is a moment ('tx:42') offshoot_query, offshoot_diff and",
  'offshoot_rollback take where they take a checkpoint.',
].join('\n');
