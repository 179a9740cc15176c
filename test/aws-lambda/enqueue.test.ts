import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { signBody } from "../../adapters/shared/auth.js"
import { Redis } from "../../src/redis/Redis.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startLambdaInvokeServer, type LambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { httpEvent, invoke, json } from "./invoke.js"

const secret = "s3cret-value"
const clientId = Effect.gen(function* () {
  const r = yield* Redis
  return (yield* r.command("client id", ["CLIENT", "ID"])) as number
})
let server: LambdaInvokeServer
const redis = rawClient()
const shared = createEnqueueHandler({
  auth: { kind: "shared-secret", secret },
  redis: { url: testRedisUrl() },
  allowedQueues: ["default", "email"]
})
const signed = createEnqueueHandler({ auth: { kind: "hmac", secret }, redis: { url: testRedisUrl() } })

beforeAll(async () => {
  await flushTestDb()
  server = await startLambdaInvokeServer({
    enqueue: { handler: (e) => shared(e as never) },
    "enqueue-signed": { handler: (e) => signed(e as never) }
  })
})
afterAll(async () => {
  await server.close()
  await shared.runtime.dispose()
  await signed.runtime.dispose()
  redis.disconnect()
})

const call = async (name: string, body: string | undefined, headers: Record<string, string> = {}, method = "POST") =>
  json(await invoke(server.client(), name, httpEvent(body, headers, method)))
const auth = { "x-asynq-secret": secret }

describe("Lambda enqueue endpoint (through the Invoke API)", () => {
  it("enqueues a valid request and answers with the TaskInfo; the task is asynq's wire format", async () => {
    const { status, body } = await call(
      "enqueue",
      JSON.stringify({ type: "email:welcome", payload: { to: "a@b.c" }, options: { queue: "email", maxRetry: 3 } }),
      auth
    )
    expect(status).toBe(200)
    expect(body).toMatchObject({ queue: "email", type: "email:welcome", state: "pending", maxRetry: 3 })
    const k = queueKeys("email")
    expect(await redis.lrange(k.pending, 0, -1)).toEqual([body.id])
    const msg = decodeTaskMessage((await redis.hgetBuffer(k.task(body.id), "msg")) as Buffer)
    expect(msg.type).toBe("email:welcome")
    expect(JSON.parse(Buffer.from(msg.payload!).toString())).toEqual({ to: "a@b.c" })
  })

  it("schedules with processAt given as an ISO date", async () => {
    const at = new Date(Date.now() + 3_600_000)
    const { status, body } = await call(
      "enqueue",
      JSON.stringify({ type: "later", options: { processAt: at.toISOString() } }),
      auth
    )
    expect(status).toBe(200)
    expect(body.state).toBe("scheduled")
    expect(Number(await redis.zscore(queueKeys("default").scheduled, body.id))).toBe(Math.ceil(at.getTime() / 1000)) // whole seconds, rounded up (asynq reads an integer score)
  })

  it("accepts a base64-encoded event body and raw payload bytes", async () => {
    const raw = Buffer.from([0, 1, 2, 255])
    const event = {
      ...httpEvent(
        Buffer.from(JSON.stringify({ type: "bytes", payloadBase64: raw.toString("base64") })).toString("base64"),
        auth
      ),
      isBase64Encoded: true
    }
    const { status, body } = json(await invoke(server.client(), "enqueue", event))
    expect(status).toBe(200)
    expect(body.payloadBase64).toBe(raw.toString("base64"))
  })

  it("rejects a missing or wrong shared secret with 401", async () => {
    const body = JSON.stringify({ type: "x" })
    const before = await redis.llen(queueKeys("default").pending)
    const missing = await call("enqueue", body)
    expect(missing.status).toBe(401)
    expect(missing.body.error.message).toBe("missing x-asynq-secret header")
    const wrong = await call("enqueue", body, { "X-Asynq-Secret": "nope" })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.message).toBe("wrong secret in x-asynq-secret header")
    expect(await redis.llen(queueKeys("default").pending)).toBe(before)
  })

  it('refuses to be created with an empty or missing secret (an unset environment variable must not make "" the password)', () => {
    const make = (auth: unknown) => () => createEnqueueHandler({ auth: auth as never, redis: { url: testRedisUrl() } })
    expect(make({ kind: "hmac", secret: "" })).toThrow(
      "enqueue handler: auth.secret is empty; set it (is its environment variable defined?)"
    )
    expect(make({ kind: "shared-secret", secret: "  " })).toThrow("auth.secret is empty")
    expect(make({ kind: "shared-secret", secret: undefined })).toThrow("auth.secret is empty")
    expect(make(undefined)).toThrow("enqueue handler: no auth given")
    expect(make({ kind: "bearer", secret: "x" })).toThrow('unknown auth kind "bearer"')
    expect(make({ kind: "none" })).not.toThrow()
  })

  it.each([
    ["", "request body is empty"],
    ["{not json", "request body is not valid JSON"],
    [JSON.stringify({ payload: 1 }), "type"],
    [JSON.stringify({ type: "" }), "type"],
    [JSON.stringify({ type: "x", options: { maxRetry: -1 } }), "maxRetry"],
    [JSON.stringify({ type: "x", options: { qeue: "typo" } }), "qeue"],
    [JSON.stringify({ type: "x", payload: 1, payloadBase64: "AA==" }), "either payload or payloadBase64"],
    [JSON.stringify({ type: "x", options: { processAt: "tomorrow-ish" } }), "options.processAt is not a date"]
  ])("rejects bad body %j with 400 and a clear message", async (body, fragment) => {
    const res = await call("enqueue", body, auth)
    expect(res.status).toBe(400)
    expect(res.body.error.message).toContain(fragment)
  })

  it("rejects other methods with 405, queues outside the allow-list with 403, duplicates with 409", async () => {
    expect((await call("enqueue", "{}", auth, "GET")).status).toBe(405)
    const forbidden = await call("enqueue", JSON.stringify({ type: "x", options: { queue: "admin" } }), auth)
    expect(forbidden.status).toBe(403)
    expect(forbidden.body.error.message).toContain('queue "admin"')
    const body = JSON.stringify({ type: "once", payload: "p", options: { unique: 60_000 } })
    expect((await call("enqueue", body, auth)).status).toBe(200)
    const dup = await call("enqueue", body, auth)
    expect(dup.status).toBe(409)
    expect(dup.body.error.code).toBe("duplicate_task")
  })

  it("accepts a valid HMAC signature and refuses a tampered body or a stale timestamp", async () => {
    const body = JSON.stringify({ type: "signed", payload: { n: 1 } })
    const ok = await call("enqueue-signed", body, {
      "x-asynq-signature": signBody(secret, { method: "POST", path: "/enqueue", body }, Date.now())
    })
    expect(ok.status).toBe(200)
    const tampered = await call("enqueue-signed", body.replace("1", "2"), {
      "x-asynq-signature": signBody(secret, { method: "POST", path: "/enqueue", body }, Date.now())
    })
    expect(tampered.status).toBe(401)
    expect(tampered.body.error.message).toContain("does not match the request")
    const stale = await call("enqueue-signed", body, {
      "x-asynq-signature": signBody(secret, { method: "POST", path: "/enqueue", body }, Date.now() - 600_000)
    })
    expect(stale.status).toBe(401)
    expect(stale.body.error.message).toContain("outside the allowed window")
    const malformed = await call("enqueue-signed", body, { "x-asynq-signature": "sha256=abc" })
    expect(malformed.status).toBe(401)
  })

  it("reuses one Redis connection across warm invocations", async () => {
    const id = () => shared.runtime.run(clientId)
    const before = await id()
    await call("enqueue", JSON.stringify({ type: "warm" }), auth)
    expect(await id()).toBe(before)
  })
})
