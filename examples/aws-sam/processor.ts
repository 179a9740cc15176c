/** Processor drain: runs tasks until 10 s before the Lambda timeout, then returns a summary. */
import * as Effect from "effect/Effect"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import { redisUrl } from "./secrets.js"
import type { Task } from "../../src/processor/Task.js"

// The same handlers a long-lived worker takes: a function, a { pattern: fn } record or a ServeMux.
const handle = (task: Task) =>
  Effect.gen(function* () {
    yield* Effect.logInfo(`processing ${task.type} ${task.id}`, task.json())
    if (task.type === "email:welcome") {
      // send the email here
    }
  })

export const handler = createProcessorHandler({
  queues: ["email", "default"],
  concurrency: 10,
  safetyMarginMs: 10_000,
  redis: await redisUrl(),
  handler: handle
})
