/**
 * Child process for exit.test.ts: runs the handlers like a Lambda container would (two warm
 * invocations each), has the server drop the tick container's connection between invocations
 * (ioredis reconnects while the container is idle) and the enqueue container's (the light
 * transport connects again on its next invocation), prints what it saw, and then simply stops:
 * no dispose, no process.exit.
 */
import * as Effect from "effect/Effect"
import { Redis as IORedis } from "ioredis"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import { createTickHandler } from "../../adapters/aws-lambda/tickHandler.js"
import { Redis } from "../../src/redis/Redis.js"

const redis = { url: process.env.REDIS_URL! }
const clientId = Effect.gen(function* () {
  const r = yield* Redis
  return (yield* r.command("client id", ["CLIENT", "ID"])) as number
})
const context = { functionName: "f", awsRequestId: "r", getRemainingTimeInMillis: () => 30_000 }

const enqueue = createEnqueueHandler({ auth: { kind: "shared-secret", secret: "s" }, redis })
const tick = createTickHandler({ queues: ["exit"], redis, log: () => {} })
const processor = createProcessorHandler({ queues: ["exit"], redis, safetyMarginMs: 1000, handler: () => Effect.void })

const event = {
  headers: { "x-asynq-secret": "s" },
  body: JSON.stringify({ type: "exit-test", options: { queue: "exit" } }),
  requestContext: { http: { method: "POST" } }
}
const statuses: Array<number> = []
const ids: Array<number> = []
for (let i = 0; i < 2; i++) {
  statuses.push((await enqueue(event)).statusCode)
  ids.push(await enqueue.runtime.run(clientId))
}
const ticks = [await tick({}), await tick({})].map((s) => s.errors.length)
const tickId = await tick.runtime.run(clientId)
const drained = [await processor({}, context), await processor({}, context)].map((s) => s.succeeded)

// The server drops the idle tick container's connection; ioredis reconnects in the background.
// The new socket must not hold the event loop either.
const admin = new IORedis(process.env.REDIS_URL!)
const clientIds = async () =>
  new Set(
    ((await admin.call("CLIENT", "LIST")) as string)
      .split("\n")
      .map((l) => /id=(\d+)/.exec(l)?.[1])
      .filter(Boolean)
  )
const before = await clientIds()
await admin.call("CLIENT", "KILL", "ID", String(tickId))
let reconnected = false
for (let i = 0; i < 200 && !reconnected; i++) {
  reconnected = [...(await clientIds())].some((id) => !before.has(id))
  if (!reconnected) await new Promise((r) => setTimeout(r, 25))
}
// The enqueue container's connection is dropped too: its next invocation connects again, and
// that socket, idle afterwards, must not hold the event loop either.
await admin.call("CLIENT", "KILL", "ID", String(ids[1]))
statuses.push((await enqueue(event)).statusCode)
const reopened = (await enqueue.runtime.run(clientId)) !== ids[1]
await admin.quit()
console.log(JSON.stringify({ statuses, sameConnection: ids[0] === ids[1], ticks, drained, reconnected, reopened }))
