/** Processor drain: runs tasks until 10 s before the Lambda timeout, then returns a summary. */
import * as Effect from "effect/Effect"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import type { TaskMessage } from "../../src/wire/TaskMessage.js"

const handle = (msg: TaskMessage) =>
  Effect.gen(function* () {
    const payload = msg.payload === undefined ? null : (JSON.parse(Buffer.from(msg.payload).toString("utf8")) as unknown)
    yield* Effect.logInfo(`processing ${msg.type} ${msg.id}`, payload)
    if (msg.type === "email:welcome") {
      // send the email here
    }
  })

export const handler = createProcessorHandler({
  queues: ["email", "default"],
  concurrency: 10,
  safetyMarginMs: 10_000,
  handler: handle
})
