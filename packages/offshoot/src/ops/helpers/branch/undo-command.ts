/**
 * The way back to the state an undo point keeps, in the terms of each surface that shows it: promote the undo point
 * back onto the branch it was taken from, with the force that branch needs while it is protected. Rollback's result,
 * the writes a session or checkout kept aside, the dashboard's panel and an agent's tool result all read it here, so
 * no surface decides the force on its own.
 */
export interface UndoCommand {
  /** The command a human runs: `offshoot promote db@point --onto branch [--force]`. */
  cli: string;
  /** The MCP tool call: `offshoot_promote database=db source=point target=branch [force=true]`. */
  tool: string;
  /** Whether undoing takes force (the branch is protected). */
  force: boolean;
}

/** The undo command that puts db@point back onto `onto`; `ontoProtected`: that branch is protected now. */
export function undoCommand(db: string, point: string, onto: string, ontoProtected: boolean): UndoCommand {
  return {
    cli: `offshoot promote ${db}@${point} --onto ${onto}${ontoProtected ? ' --force' : ''}`,
    tool: `offshoot_promote database=${db} source=${point} target=${onto}${ontoProtected ? ' force=true' : ''}`,
    force: ontoProtected,
  };
}

/**
 * The undo an agent is given: its own tool call when it may make it (no force is needed, or its human let it force
 * with -allow-force, or is asked to confirm forced calls with -confirm-force), else the human's command, which it
 * must ask the human to run.
 */
export function agentUndo(u: UndoCommand, mayForce: boolean): { command: string; human: boolean } {
  return !u.force || mayForce ? { command: u.tool, human: false } : { command: u.cli, human: true };
}
