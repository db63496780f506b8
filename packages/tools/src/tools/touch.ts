import { z } from 'zod/v4';
import { branchArg, databaseArg } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

/** `offshoot_touch`: restarts a branch's TTL clock, optionally setting or clearing its TTL. */
export const touchTool = defineTool({
  name: 'offshoot_touch',
  title: "Extend a branch's life",
  description: [
    "Restart a branch's TTL clock so it is not reaped while you still need it (a fork you are still working in, or",
    'the undo point of a rollback). Without ttl it only extends; ttl sets a new TTL ("4h"), "none" clears it. The',
    'undo points of protected branches cannot have their TTL shortened or cleared from here.',
  ].join(' '),
  annotations: HINTS.additiveIdempotent,
  input: {
    database: databaseArg,
    branch: branchArg('branch to touch'),
    ttl: z.string().optional().describe('new TTL ("4h"), or "none" to clear it; omitted keeps the TTL'),
  },
  output: {
    db: z.string(),
    branch: z.string(),
    ttl: z.string().nullable(),
    touched_at: z.string(),
    expires_at: z.string().nullable(),
  },
});
