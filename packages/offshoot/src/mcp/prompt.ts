import type { McpServer } from '@modelcontextprotocol/server';
import { LOOP_RULES, LOOP_STEPS } from './loop-text.js';

/** Registers `offshoot-loop`: the six-step loop and its rules, for hosts that show prompts. */
export function registerLoopPrompt(server: McpServer): void {
  server.registerPrompt(
    'offshoot-loop',
    {
      title: 'The offshoot branch loop',
      description: 'How to change a database safely with offshoot: fork, work in the fork, checkpoint, diff, promote.',
    },
    () => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: `Work on databases through offshoot's branch loop:\n${LOOP_STEPS}\n\n${LOOP_RULES}`,
          },
        },
      ],
    }),
  );
}
