/**
 * Issue 13, points 5 and 6: the enqueue endpoint checks the caller before it touches Redis, never
 * names the Redis address in an answer, signs method + path + exact body bytes, and accepts each
 * signature once. Through the real handler (Invoke API) against private redis-server processes.
 */
import { createHmac } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { signBody } from "../../adapters/shared/auth.js"
import { queueKeys, usedSignatureKey } from "../../src/wire/keys.js"
import { startLambdaInvokeServer, type LambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { freePort, type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { httpEvent, invoke, json } from "./invoke.js"

const secret = "replay-secret"
const redis = rawClient()
let server: LambdaInvokeServer
let own: RedisServerHandle
let deadPort: number
const logged: Array<string> = []
const handlers = {} as Record<string, ReturnType<typeof createEnqueueHandler>>

beforeAll(async () => {
  await flushTestDb()
  own = await startRedisServer()
  deadPort = await freePort()
  const down = { url: `redis://app-user:pw@127.0.0.1:${deadPort}/3`, connectTimeoutMs: 1000 }
  const log = (line: string) => logged.push(line)
  handlers.signed = createEnqueueHandler({ auth: { kind: "hmac", secret }, redis: { url: testRedisUrl() } })
  handlers.watchedShared = createEnqueueHandler({ auth: { kind: "shared-secret", secret }, redis: { url: own.url } })
  handlers.watchedSigned = createEnqueueHandler({ auth: { kind: "hmac", secret }, redis: { url: own.url } })
  handlers.downShared = createEnqueueHandler({ auth: { kind: "shared-secret", secret }, redis: down, log })
  handlers.downSigned = createEnqueueHandler({ auth: { kind: "hmac", secret }, redis: down, log })
  server = await startLambdaInvokeServer(Object.fromEntries(Object.entries(handlers).map(([name, h]) => [name, { handler: (e: unknown) => h(e as never) }])))
}, 30_000)
afterAll(async () => {
  await server.close()
  for (const h of Object.values(handlers)) await h.runtime.dispose()
  redis.disconnect()
  await own.stop()
})

const call = async (name: string, body: string, headers: Record<string, string> = {}, path = "/enqueue") =>
  json(await invoke(server.client(), name, { ...httpEvent(body, headers), rawPath: path }))
const sign = (body: string | Uint8Array, over: { method?: string; path?: string; at?: number } = {}) => ({
  "x-asynq-signature": signBody(secret, { method: over.method ?? "POST", path: over.path ?? "/enqueue", body }, over.at ?? Date.now())
})
const connectionsReceived = async (): Promise<number> => {
  const c = new (await import("ioredis")).Redis(own.url)
  try {
    return Number(/total_connections_received:(\d+)/.exec(await c.info("stats"))![1])
  } finally {
    c.disconnect()
  }
}

describe("Lambda enqueue endpoint: authentication before Redis", () => {
  it("answers an unauthenticated request without opening a Redis connection", async () => {
    const body = JSON.stringify({ type: "x" })
    const before = await connectionsReceived()
    expect((await call("watchedShared", body)).status).toBe(401)
    expect((await call("watchedShared", body, { "x-asynq-secret": "wrong" })).status).toBe(401)
    expect((await call("watchedSigned", body)).status).toBe(401)
    expect((await call("watchedSigned", body, { "x-asynq-signature": signBody("other-secret", { method: "POST", path: "/enqueue", body }, Date.now()) })).status).toBe(401)
    // +1: connectionsReceived's own connection.
    expect(await connectionsReceived()).toBe(before + 1)
    // The counter does see the handler's connection once a caller is accepted.
    expect((await call("watchedShared", body, { "x-asynq-secret": secret })).status).toBe(200)
    expect(await connectionsReceived()).toBe(before + 3)
  })

  it("with Redis down, refuses an unauthenticated request with 401, not 503", async () => {
    const body = JSON.stringify({ type: "x" })
    const missing = await call("downShared", body)
    expect(missing.status).toBe(401)
    expect(missing.body.error.message).toBe("missing x-asynq-secret header")
    expect((await call("downShared", body, { "x-asynq-secret": "wrong" })).status).toBe(401)
    expect((await call("downSigned", body, { "x-asynq-signature": "t=1,v1=00" })).status).toBe(401)
  })

  it("with Redis down, an accepted request gets a 503 that names no Redis user, host, port or database; the log has them", async () => {
    logged.length = 0
    const body = JSON.stringify({ type: "x" })
    for (const res of [await call("downShared", body, { "x-asynq-secret": secret }), await call("downSigned", body, sign(body))]) {
      expect(res.status).toBe(503)
      expect(res.body.error).toEqual({ code: "backend_unavailable", message: "queue backend unavailable; try again later" })
      const text = JSON.stringify(res.body)
      for (const secretPart of ["app-user", "127.0.0.1", String(deadPort), "redis://", "/3"]) expect(text).not.toContain(secretPart)
    }
    expect(logged).toHaveLength(2)
    expect(logged[0]).toContain(`127.0.0.1:${deadPort}`)
  })
})

describe("Lambda enqueue endpoint: HMAC signatures", () => {
  it("signBody follows the README's recipe: HMAC-SHA256 over \"<t>.<METHOD>.<path>.\" + the body bytes", () => {
    const expected = createHmac("sha256", secret).update('1700000000.POST./enqueue.{"type":"x"}').digest("hex")
    expect(signBody(secret, { method: "post", path: "/enqueue?ignored=1", body: '{"type":"x"}' }, 1_700_000_000_999)).toBe(`t=1700000000,v1=${expected}`)
    expect(signBody(secret, { method: "POST", path: "/enqueue", body: Buffer.from('{"type":"x"}') }, 1_700_000_000_000)).toBe(`t=1700000000,v1=${expected}`)
  })

  it("accepts a signed request once: the same request sent 3 times writes 1 task, the replays get 401", async () => {
    const body = JSON.stringify({ type: "replayed", options: { queue: "replay" } })
    const headers = sign(body)
    const answers = [await call("signed", body, headers), await call("signed", body, headers), await call("signed", body, headers)]
    expect(answers.map((a) => a.status)).toEqual([200, 401, 401])
    expect(answers[1]!.body.error.code).toBe("replayed_signature")
    expect(answers[1]!.body.error.message).toContain("already used")
    expect(await redis.llen(queueKeys("replay").pending)).toBe(1)
    // Remembered until the signature's window ends (at most the 5-minute tolerance from its timestamp).
    const v1 = /v1=([0-9a-f]+)/.exec(headers["x-asynq-signature"])![1]!
    const ttl = await redis.pttl(usedSignatureKey(v1))
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(300_000)
    // A fresh signature for the same body is a new request.
    expect((await call("signed", body, sign(body, { at: Date.now() + 1000 }))).status).toBe(200)
  })

  it("covers the method and the path: a signature made for another path or method is refused", async () => {
    const body = JSON.stringify({ type: "pathbound", options: { queue: "pathbound" } })
    const otherPath = await call("signed", body, sign(body, { path: "/admin/enqueue" }))
    expect(otherPath.status).toBe(401)
    expect(otherPath.body.error.message).toContain("does not match the request")
    expect((await call("signed", body, sign(body, { method: "PUT" }))).status).toBe(401)
    // The query string is not part of the signed path.
    expect((await call("signed", body, sign(body), "/enqueue?x=1")).status).toBe(200)
    expect(await redis.llen(queueKeys("pathbound").pending)).toBe(1)
  })

  it("covers the exact body bytes: two bodies that decode to the same text are told apart", async () => {
    // 0xFF and 0xFE are both invalid UTF-8 and both decode to U+FFFD.
    const bytes = (b: number) => Buffer.concat([Buffer.from('{"type":"raw","payload":"'), Buffer.from([b]), Buffer.from('","options":{"queue":"rawbytes"}}')])
    const event = (b: Buffer, headers: Record<string, string>) => ({ ...httpEvent(b.toString("base64"), headers), isBase64Encoded: true })
    const signedFF = sign(bytes(0xff))
    const swapped = json(await invoke(server.client(), "signed", event(bytes(0xfe), signedFF)))
    expect(swapped.status).toBe(401)
    expect(json(await invoke(server.client(), "signed", event(bytes(0xff), signedFF))).status).toBe(200)
    expect(await redis.llen(queueKeys("rawbytes").pending)).toBe(1)
  })
})
