/** The branch a tool works on when the call names none. */
export const MAIN_BRANCH = 'main';

/** The prefix of the meta keys that are offshoot's own: no call may set one. */
export const OFFSHOOT_META_PREFIX = 'offshoot.';

/**
 * The limits the tools' texts and schemas name. offshoot enforces them; they are written here because this package
 * reaches no engine, and a test of the engine keeps the two equal.
 */
export const TOOL_LIMITS = {
  meta: { maxKeys: 32, maxKeyBytes: 64, maxValueBytes: 512 },
  query: { defaultRows: 100, maxRows: 1000, maxBytes: 4 << 20 },
  /** Row changes a diff lists per table and kind: when the call names no limit, and the most it may ask for. */
  diff: { defaultRows: 20, maxRows: 500 },
  /** One fork call makes at most a thousand branches, so an agent's request cannot hold offshoot unbounded. */
  moreBranches: 999,
  /** Records a log returns when the call names no limit (the newest ones). */
  log: { defaultRecords: 100 },
} as const;
