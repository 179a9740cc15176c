import type { Redis as IORedis } from "ioredis"
import { Effect, Result, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient, InvalidArgument } from "../../src/client.js"
import { defineTask } from "../../src/tasks/index.js"
import { ServeMux } from "../../src/processor/Mux.js"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { payloadJson } from "../../src/wire/payload.js"
import { readTask, zsetOf } from "../support/arrange.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { runBroker, startServer } from "../processor/support.js"
import { waitFor } from "../support/waitFor.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

const SendEmail = defineTask(
  "email:send",
  Schema.Struct({ to: Schema.String, cc: Schema.optional(Schema.Array(Schema.String)) }),
  {
    queue: "td-email",
    maxRetry: 3
  }
)

describe("defineTask", () => {
  it("exports the payload's JSON Schema (draft 2020-12) for other producers", () => {
    expect(SendEmail.jsonSchema()).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        to: { type: "string" },
        cc: { anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] }
      },
      required: ["to"],
      additionalProperties: true
    })
  })

  it("rejects an empty type", () => {
    expect(() => defineTask(" ", Schema.String)).toThrow(InvalidArgument)
  })

  it("client.enqueue: the payload is written as JSON, the definition's options are defaults and call options override them", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      const info = await client.enqueue(SendEmail, { to: "a@b.c" })
      expect(info).toMatchObject({ type: "email:send", queue: "td-email", maxRetry: 3, state: "pending" })
      expect(payloadJson(info.payload)).toEqual({ to: "a@b.c" })
      const stored = await readTask(c, "td-email", info.id)
      expect(payloadJson(stored.msg!.payload)).toEqual({ to: "a@b.c" })
      const other = await client.enqueue(
        SendEmail,
        { to: "x@y.z", cc: ["c@d.e"] },
        { queue: "td-other", maxRetry: undefined }
      )
      expect(other).toMatchObject({ queue: "td-other", maxRetry: 3 })
    } finally {
      await client.close()
    }
  })

  it("client.enqueue: an invalid payload is InvalidArgument (payload) with the schema's message, and nothing is written", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      // @ts-expect-error `to` must be a string: the definition types the payload
      const e = await client.enqueue(SendEmail, { to: 42 }, { queue: "td-invalid" }).catch((x: unknown) => x)
      expect(e).toBeInstanceOf(InvalidArgument)
      expect(e).toMatchObject({ field: "payload" })
      expect((e as InvalidArgument).message).toBe(
        'payload of task "email:send" does not match its schema: Expected string\n  at ["to"]'
      )
      expect(await c.sismember("asynq:queues", "td-invalid")).toBe(0)
      expect(await c.keys("asynq:{td-invalid}*")).toEqual([])
    } finally {
      await client.close()
    }
  })

  it("client.enqueueMany takes definitions and plain types in its items", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      const out = await client.enqueueMany([
        { type: SendEmail, payload: { to: "1@x" }, options: { queue: "td-many" } },
        { type: SendEmail, payload: { to: 2 }, options: { queue: "td-many" } },
        { type: "plain", payload: { any: "thing" }, options: { queue: "td-many" } }
      ])
      expect(out.map((o) => (o.ok ? o.info.type : `${o.error._tag}:${(o.error as InvalidArgument).field}`))).toEqual([
        "email:send",
        "InvalidArgument:payload",
        "plain"
      ])
      expect(await c.llen(queueKeys("td-many").pending)).toBe(2)
    } finally {
      await client.close()
    }
  })

  it("the enqueue and enqueueMany steps take a definition", async () => {
    const [one, many] = await runBroker(
      Effect.gen(function* () {
        const one = yield* enqueue(SendEmail, { to: "step@x" })
        const bad = yield* enqueue(SendEmail, { to: 1 } as never).pipe(Effect.flip)
        expect(bad).toMatchObject({ _tag: "InvalidArgument", field: "payload" })
        const many = yield* enqueueMany([{ type: SendEmail, payload: { to: "m@x" }, options: { queue: "td-steps" } }])
        return [one, many] as const
      })
    )
    expect(one).toMatchObject({ queue: "td-email", maxRetry: 3 })
    expect(many.map((r) => Result.isSuccess(r) && r.success.queue)).toEqual(["td-steps"])
  })
})

describe("ServeMux.handle(definition, …) with a real server", () => {
  it("the handler gets the decoded payload; a payload that does not decode is archived at once with the schema's message and the handler never runs", async () => {
    const seen: Array<{ to: string; type: string }> = []
    const mux = new ServeMux().handle(SendEmail, async (payload, task) => {
      seen.push({ to: payload.to, type: task.type })
    })
    const server = await startServer(mux, { queues: { "td-serve": 1 } })
    try {
      const good = await server.run(enqueue(SendEmail, { to: "ok@x" }, { queue: "td-serve" }))
      // Bad bytes under the same type, written with the plain-string API (as another producer might).
      const bad = await server.enqueue("email:send", { to: 7 }, { queue: "td-serve", maxRetry: 5 })
      const k = queueKeys("td-serve")
      await waitFor(
        "both settled",
        async () =>
          (await c.zcard(k.archived)) === 1 && (await c.llen(k.pending)) === 0 && (await c.llen(k.active)) === 0
      )
      expect(seen).toEqual([{ to: "ok@x", type: "email:send" }])
      expect((await zsetOf(c, k.archived)).map(([id]) => id)).toEqual([bad])
      const archived = (await readTask(c, "td-serve", bad)).msg!
      expect(archived.retried).toBe(0)
      expect(archived.errorMsg).toBe(
        'payload of task "email:send" does not match the schema of "email:send": Expected string\n  at ["to"]'
      )
      expect(good.id).not.toBe(bad)
    } finally {
      await server.shutdown()
    }
  })
})
