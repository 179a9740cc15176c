/** The functions the Functions Framework serves in the tests (configured from the environment). */
import * as functions from "@google-cloud/functions-framework"
import { createEnqueueFunction } from "../../adapters/gcp-functions/enqueueFunction.js"

const redis = { url: process.env.REDIS_URL! }
const secret = process.env.ENQUEUE_SECRET!

functions.http("enqueue", createEnqueueFunction({ auth: { kind: "shared-secret", secret }, redis }))
functions.http("enqueueSigned", createEnqueueFunction({ auth: { kind: "hmac", secret }, redis }))
// Issue 13: Redis unreachable (REDIS_DOWN_URL: a port nothing listens on).
functions.http(
  "enqueueDown",
  createEnqueueFunction({
    auth: { kind: "shared-secret", secret },
    redis: { url: process.env.REDIS_DOWN_URL ?? "", connectTimeoutMs: 1000 }
  })
)

import * as Effect from "effect/Effect"
import { createDrainFunction } from "../../adapters/gcp-functions/drainFunction.js"
import { createTickEventFunction, createTickHttpFunction } from "../../adapters/gcp-functions/tickFunction.js"

functions.http("tick", createTickHttpFunction({ queues: ["ticked"], redis, auth: { kind: "shared-secret", secret } }))
functions.http(
  "tickSigned",
  createTickHttpFunction({ queues: ["ticked"], redis, auth: { kind: "hmac", secret }, log: () => {} })
)
functions.cloudEvent("tickEvent", createTickEventFunction({ queues: ["evented"], redis }))
functions.http(
  "drain",
  createDrainFunction({
    queues: ["drained"],
    redis,
    auth: { kind: "shared-secret", secret },
    timeoutMs: 2500,
    safetyMarginMs: 800,
    concurrency: 2,
    handler: () => Effect.sleep(100)
  })
)
// Issue 16: every task takes longer than the function has (3 s timeout, margin 2 s: hard stop after 2 s).
functions.http(
  "drainLong",
  createDrainFunction({
    queues: ["long"],
    redis,
    auth: { kind: "shared-secret", secret },
    timeoutMs: 3000,
    safetyMarginMs: 2000,
    concurrency: 5,
    retryDelay: () => 0,
    handler: () => Effect.sleep(5000)
  })
)
// Observability: spans and metrics sent to the OTLP receiver at OTLP_URL before the response (export interval: an hour).
import { otlpLayer } from "../../src/observability/otlp.js"
if (process.env.OTLP_URL) {
  functions.http(
    "drainTraced",
    createDrainFunction({
      queues: ["traced"],
      redis,
      auth: { kind: "shared-secret", secret },
      timeoutMs: 20_000,
      safetyMarginMs: 1000,
      metrics: true,
      handler: () => Effect.void,
      telemetry: otlpLayer({ url: process.env.OTLP_URL, exportIntervalMs: 3_600_000 })
    })
  )
}
