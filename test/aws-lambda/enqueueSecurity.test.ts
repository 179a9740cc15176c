/**
 * Issue 13, points 5 and 6: the enqueue endpoint checks the caller before it touches Redis, never
 * names the Redis address in an answer, signs method + path + exact body bytes, and accepts each
 * signature once. Through the real handler (Invoke API) against private redis-server processes.
 */
import { createHmac } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { signBody } from "../../adapters/shared/auth.js"
import { queueKeys, signedRequestKey } from "../../src/wire/keys.js"
import { Redis as IORedis } from "ioredis"
import { startLambdaInvokeServer, type LambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { startReplyDropProxy } from "../support/replyDropProxy.js"
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
  server = await startLambdaInvokeServer(
    Object.fromEntries(Object.entries(handlers).map(([name, h]) => [name, { handler: (e: unknown) => h(e as never) }]))
  )
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
  "x-asynq-signature": signBody(
    secret,
    { method: over.method ?? "POST", path: over.path ?? "/enqueue", body },
    over.at ?? Date.now()
  )
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
    expect(
      (
        await call("watchedSigned", body, {
          "x-asynq-signature": signBody("other-secret", { method: "POST", path: "/enqueue", body }, Date.now())
        })
      ).status
    ).toBe(401)
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
    for (const res of [
      await call("downShared", body, { "x-asynq-secret": secret }),
      await call("downSigned", body, sign(body))
    ]) {
      expect(res.status).toBe(503)
      expect(res.body.error).toEqual({
        code: "backend_unavailable",
        message: "queue backend unavailable; try again later"
      })
      const text = JSON.stringify(res.body)
      for (const secretPart of ["app-user", "127.0.0.1", String(deadPort), "redis://", "/3"])
        expect(text).not.toContain(secretPart)
    }
    expect(logged).toHaveLength(2)
    expect(logged[0]).toContain(`127.0.0.1:${deadPort}`)
  })
})

describe("Lambda enqueue endpoint: HMAC signatures", () => {
  it('signBody follows the recipe: t=<unix ms>,n=<nonce>,v2=HMAC-SHA256 over "v2.<t>.<n>.<METHOD>.<path>." + the body bytes', () => {
    const expected = createHmac("sha256", secret)
      .update('v2.1700000000999.nonce-123.POST./enqueue.{"type":"x"}')
      .digest("hex")
    expect(
      signBody(
        secret,
        { method: "post", path: "/enqueue?ignored=1", body: '{"type":"x"}' },
        1_700_000_000_999,
        "nonce-123"
      )
    ).toBe(`t=1700000000999,n=nonce-123,v2=${expected}`)
    expect(
      signBody(
        secret,
        { method: "POST", path: "/enqueue", body: Buffer.from('{"type":"x"}') },
        1_700_000_000_999,
        "nonce-123"
      )
    ).toBe(`t=1700000000999,n=nonce-123,v2=${expected}`)
    // A fresh nonce each time: the same body signed in the same millisecond gives two signatures.
    expect(signBody(secret, { method: "POST", path: "/enqueue", body: "{}" }, 1)).not.toBe(
      signBody(secret, { method: "POST", path: "/enqueue", body: "{}" }, 1)
    )
  })

  it("issue 29: two requests with the same body signed in the same millisecond both enqueue", async () => {
    const body = JSON.stringify({ type: "twice", options: { queue: "twice" } })
    const at = Date.now()
    const [a, b] = [await call("signed", body, sign(body, { at })), await call("signed", body, sign(body, { at }))]
    expect([a.status, b.status]).toEqual([200, 200])
    expect(a.body.id).not.toBe(b.body.id)
    expect(await redis.llen(queueKeys("twice").pending)).toBe(2)
  })

  it("issue 29: the same signed request sent 3 times writes 1 task; each resend gets the first answer (same task id), marked x-asynq-replayed", async () => {
    const body = JSON.stringify({ type: "replayed", options: { queue: "replay" } })
    const headers = sign(body)
    const sends = [
      await invoke(server.client(), "signed", httpEvent(body, headers)),
      await invoke(server.client(), "signed", httpEvent(body, headers)),
      await invoke(server.client(), "signed", httpEvent(body, headers))
    ]
    const answers = sends.map((r) => r.payload as { statusCode: number; headers: Record<string, string>; body: string })
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200])
    expect(answers[1]!.body).toBe(answers[0]!.body)
    expect(answers[2]!.body).toBe(answers[0]!.body)
    expect(answers.map((a) => a.headers["x-asynq-replayed"])).toEqual([undefined, "true", "true"])
    expect(await redis.llen(queueKeys("replay").pending)).toBe(1)
    expect(await redis.lrange(queueKeys("replay").pending, 0, -1)).toEqual([JSON.parse(answers[0]!.body).id])
    // Remembered (in the queue's slot) until the signature's window ends: at most the 5-minute tolerance from its timestamp.
    const v2 = /v2=([0-9a-f]+)/.exec(headers["x-asynq-signature"])![1]!
    const ttl = await redis.pttl(signedRequestKey("replay", v2))
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(300_000)
    // A fresh signature for the same body is a new request.
    expect((await call("signed", body, sign(body))).status).toBe(200)
    expect(await redis.llen(queueKeys("replay").pending)).toBe(2)
  })

  it("issue 29: old signers (t=<unix seconds>,v1=…) keep working; the same v1 signature again gets the first answer", async () => {
    const body = JSON.stringify({ type: "oldsigner", options: { queue: "oldsigner" } })
    const t = Math.floor(Date.now() / 1000)
    const v1 = createHmac("sha256", secret).update(`${t}.POST./enqueue.${body}`).digest("hex")
    const headers = { "x-asynq-signature": `t=${t},v1=${v1}` }
    const first = await call("signed", body, headers)
    const again = await call("signed", body, headers)
    expect([first.status, again.status]).toEqual([200, 200])
    expect(again.body.id).toBe(first.body.id)
    expect(await redis.llen(queueKeys("oldsigner").pending)).toBe(1)
  })

  it("issue 29: a refused request sent again is refused the same way, even once the refusal's cause is gone", async () => {
    const first = JSON.stringify({ type: "taken", payload: 1, options: { queue: "refusals", taskId: "fixed-id" } })
    expect((await call("signed", first, sign(first))).status).toBe(200)
    // Another task under the same id: a conflict.
    const body = JSON.stringify({ type: "taken", payload: 2, options: { queue: "refusals", taskId: "fixed-id" } })
    const headers = sign(body)
    const refused = await call("signed", body, headers)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe("task_id_conflict")
    await redis.del(queueKeys("refusals").task("fixed-id"), queueKeys("refusals").pending)
    const again = await call("signed", body, headers)
    expect(again.status).toBe(409)
    expect(await redis.llen(queueKeys("refusals").pending)).toBe(0)
  })

  it("issue 29: the reply of the signed write is lost: the same request sent again gets 200 and the task is written once", async () => {
    const proxy = await startReplyDropProxy({ host: "127.0.0.1", port: Number(new URL(own.url).port) })
    const lossy = createEnqueueHandler({
      auth: { kind: "hmac", secret },
      redis: { url: `redis://127.0.0.1:${proxy.port}` }
    })
    server.define("lossy", { handler: (e: unknown) => lossy(e as never) })
    const ownClient = new IORedis(own.url)
    try {
      const body = JSON.stringify({ type: "lossy", options: { queue: "lossy" } })
      const headers = sign(body)
      const hex = /v[12]=([0-9a-f]+)/.exec(headers["x-asynq-signature"])![1]!
      // The command that records the signature (and, now, writes the task) runs; its reply is lost.
      const dropped = proxy.dropReplyOf((argv) => argv.some((a) => a.includes(hex)))
      const first = await call("lossy", body, headers)
      await dropped
      // The caller does what the docs say on a 503 (or no answer): it sends the same request again.
      const retry = await call("lossy", body, headers)
      expect(retry.status).toBe(200)
      if (first.status === 200) expect(retry.body.id).toBe(first.body.id)
      else expect(first.status).toBe(503)
      expect(await ownClient.lrange(queueKeys("lossy").pending, 0, -1)).toEqual([retry.body.id])
    } finally {
      ownClient.disconnect()
      await lossy.runtime.dispose()
      await proxy.close()
    }
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
    const bytes = (b: number) =>
      Buffer.concat([
        Buffer.from('{"type":"raw","payload":"'),
        Buffer.from([b]),
        Buffer.from('","options":{"queue":"rawbytes"}}')
      ])
    const event = (b: Buffer, headers: Record<string, string>) => ({
      ...httpEvent(b.toString("base64"), headers),
      isBase64Encoded: true
    })
    const signedFF = sign(bytes(0xff))
    const swapped = json(await invoke(server.client(), "signed", event(bytes(0xfe), signedFF)))
    expect(swapped.status).toBe(401)
    expect(json(await invoke(server.client(), "signed", event(bytes(0xff), signedFF))).status).toBe(200)
    expect(await redis.llen(queueKeys("rawbytes").pending)).toBe(1)
  })
})
