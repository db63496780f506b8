// The front door of ops: the safety policy as the surfaces see it. Who asks (an Actor, which every destructive verb
// is given and decides by, inside its lease) and how undo points are named and told apart. The rules themselves run
// inside the verbs (helpers/safety/policy.ts); a surface only says who is asking.

export {
  type UndoKind,
  type UndoTag,
  undoPointName,
  undoTag,
} from './helpers/branch/undo-point-names.js';
export { type Actor, HUMAN, undoPointOfProtected } from './helpers/safety/policy.js';
