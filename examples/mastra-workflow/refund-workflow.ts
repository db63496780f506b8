// A Mastra workflow that needs a human: it assesses a refund, then suspends until someone decides. Mastra keeps the
// suspended run in its storage, so whoever resumes it (this process or another, later) reads it from there.
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { z } from 'zod';

const refund = z.object({ orderId: z.number(), amount: z.number() });
const assessed = refund.extend({ risk: z.enum(['low', 'high']) });
const decided = z.object({ orderId: z.number(), refunded: z.number(), note: z.string() });

const assess = createStep({
  id: 'assess',
  inputSchema: refund,
  outputSchema: assessed,
  execute: async ({ inputData }) => ({
    ...inputData,
    risk: inputData.amount > 100 ? ('high' as const) : ('low' as const),
  }),
});

const decide = createStep({
  id: 'decide',
  inputSchema: assessed,
  outputSchema: decided,
  resumeSchema: z.object({ approved: z.boolean() }),
  suspendSchema: z.object({ question: z.string() }),
  execute: async ({ inputData, resumeData, suspend }) => {
    if (resumeData === undefined) {
      return suspend({
        question: `refund ${inputData.amount} on order ${inputData.orderId} (${inputData.risk} risk)?`,
      });
    }
    return {
      orderId: inputData.orderId,
      refunded: resumeData.approved ? inputData.amount : 0,
      note: resumeData.approved ? 'approved' : 'rejected',
    };
  },
});

/** `refund`: assess, then wait for a human's decision; a new instance per Mastra, which binds it to its storage. */
export function refundWorkflow() {
  return createWorkflow({ id: 'refund', inputSchema: refund, outputSchema: decided })
    .then(assess)
    .then(decide)
    .commit();
}
