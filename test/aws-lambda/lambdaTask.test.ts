import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTask } from "../../src/processor/Task.js"
import { invokeLambdaTask, type LambdaTaskEvent } from "../../adapters/aws-lambda/lambdaTask.js"
import { createProcessorHandler } from "../../adapters/aws-lambda/processorHandler.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startLambdaInvokeServer, type LambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { runNow } from "./arrange.js"

const redis = rawClient()
const k = queueKeys("lambda")
let server: LambdaInvokeServer
const received: Array<LambdaTaskEvent> = []

beforeAll(async () => {
  await flushTestDb()
  server = await startLambdaInvokeServer({
    worker: {
      handler: async (e) => {
        const event = e as LambdaTaskEvent
        received.push(event)
        if ((event.payload as { fail?: boolean }).fail) throw new TypeError("cannot render invoice")
        return { rendered: event.id }
      }
    }
  })
})
afterAll(async () => {
  await server.close()
  redis.disconnect()
})

describe("Lambda task handler (runs a task by invoking a function synchronously)", () => {
  it("completes tasks whose function succeeds and retries/archives tasks whose function errors", async () => {
    const ok = await runNow(enqueue("invoice", { n: 1 }, { queue: "lambda" }))
    const bad = await runNow(enqueue("invoice", { n: 2, fail: true }, { queue: "lambda", maxRetry: 2 }))
    const last = await runNow(enqueue("invoice", { n: 3, fail: true }, { queue: "lambda", maxRetry: 0 }))
    const processor = createProcessorHandler({
      queues: ["lambda"],
      safetyMarginMs: 1000,
      redis: { url: testRedisUrl() },
      handler: invokeLambdaTask({ functionName: "worker" }, server.client())
    })
    const summary = await processor(
      {},
      { functionName: "processor", awsRequestId: "r1", getRemainingTimeInMillis: () => 60_000 }
    )
    await processor.runtime.dispose()
    expect(summary).toMatchObject({ succeeded: 1, retried: 1, archived: 1, stoppedBecause: "empty" })

    expect(received.map((e) => e.id).sort()).toEqual([ok.id, bad.id, last.id].sort())
    const first = received.find((e) => e.id === ok.id)!
    expect(first).toMatchObject({ type: "invoice", queue: "lambda", payload: { n: 1 }, retried: 0, maxRetry: 25 })
    expect(Buffer.from(first.payloadBase64!, "base64").toString()).toBe('{"n":1}')

    expect(await redis.exists(k.task(ok.id))).toBe(0)
    const retried = decodeTaskMessage((await redis.hgetBuffer(k.task(bad.id), "msg"))!)
    expect(retried.retried).toBe(1)
    expect(retried.errorMsg).toBe("worker failed (TypeError): cannot render invoice")
    expect(await redis.zscore(k.archived, last.id)).not.toBeNull()
  })

  it("fails with a LambdaTaskError when the function does not exist", async () => {
    const task = await runNow(enqueue("x", "p", { queue: "lambda" }))
    const msg = decodeTaskMessage((await redis.hgetBuffer(k.task(task.id), "msg"))!)
    const err = await Effect.runPromise(
      Effect.flip(
        invokeLambdaTask(
          { functionName: "nope" },
          server.client()
        )(makeTask(msg, new Date(Date.now() + 60_000), { taskId: msg.id, write: async () => 0 }))
      )
    )
    expect(err._tag).toBe("LambdaTaskError")
    expect(err.functionError).toBeUndefined()
    expect(err.message).toContain("Function not found")
  })
})
