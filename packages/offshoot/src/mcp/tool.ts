import type { ArgsOf, OutputOf, Shape, ToolSpec } from '@offshoot/tools';
import type { Confirmation } from './confirm.js';
import type { McpDeps } from './deps.js';

/** What a tool produced: the structured result (validated against its outputSchema) and a short prose summary. */
export interface ToolOutcome<O extends Shape> {
  structured: OutputOf<O>;
  text: string;
  /** The branches the call read or changed, linked in the result as resources (`db@branch`). */
  touched?: Array<{ db: string; branch: string }>;
}

/**
 * How this server runs one tool of the catalogue (`@offshoot/tools`, which holds its name, texts, schemas and
 * hints): the run, and for a call the safety policy refused, the question to ask the host's human.
 */
export interface ToolRun<S extends ToolSpec<Shape, Shape>> {
  run(args: ArgsOf<S['input']>, deps: McpDeps): Promise<ToolOutcome<S['output']>>;
  /**
   * What the refused call would do, to ask the host's human under -confirm-force; undefined when the state it
   * would name is gone (the branch, the checkpoint).
   */
  confirm?(args: ArgsOf<S['input']>, deps: McpDeps): Promise<Confirmation | undefined>;
}
