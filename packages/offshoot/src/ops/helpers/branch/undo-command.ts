/**
 * The command a human runs to get back the state an undo point keeps: promote the undo point back onto the branch it
 * was taken from, with the --force that branch needs while it is protected (`ontoProtected`). Rollback's output, the
 * writes a session kept aside, a refusal's hint and the dashboard's panel all read it here, so none of them decides
 * the force on its own. (An agent's tool call to the same effect is the tool catalogue's, `rollbackUndo`.)
 */
export function undoCommand(db: string, point: string, onto: string, ontoProtected: boolean): string {
  return `offshoot promote ${db}@${point} --onto ${onto}${ontoProtected ? ' --force' : ''}`;
}
