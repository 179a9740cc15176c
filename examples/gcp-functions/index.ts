/** Cloud Functions entry point: one source, several targets (deploy each with --entry-point). */
import * as functions from "@google-cloud/functions-framework"
import * as Effect from "effect/Effect"
import { createDrainFunction } from "../../adapters/gcp-functions/drainFunction.js"
import { createEnqueueFunction } from "../../adapters/gcp-functions/enqueueFunction.js"
import { createTickEventFunction, createTickHttpFunction } from "../../adapters/gcp-functions/tickFunction.js"

// An unset ASYNQ_SECRET makes every HTTP function below fail at cold start with a clear InvalidArgument.
const secret = process.env.ASYNQ_SECRET!
const queues = ["email", "default"]

functions.http("enqueue", createEnqueueFunction({ auth: { kind: "hmac", secret } }))
functions.http("tick", createTickHttpFunction({ queues, auth: { kind: "shared-secret", secret } }))
functions.cloudEvent("tickEvent", createTickEventFunction({ queues }))
functions.http(
  "drain",
  createDrainFunction({
    queues,
    auth: { kind: "shared-secret", secret },
    timeoutMs: 540_000,
    safetyMarginMs: 15_000,
    concurrency: 10,
    handler: (task) => Effect.logInfo(`processing ${task.type} ${task.id}`)
  })
)
