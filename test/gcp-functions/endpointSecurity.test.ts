/**
 * Issue 13, points 5 and 6, under the real Functions Framework: the caller is checked before Redis
 * is touched, a 503 names no Redis address (the function's log does), and a signature covers
 * method, path and body; a signed enqueue is written once (a resend gets the first answer), the HTTP
 * tick refuses a replay.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signBody } from "../../adapters/shared/auth.js"
import { queueKeys } from "../../src/wire/keys.js"
import { freePort } from "../support/redis-server.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { type FrameworkHandle, startFunction } from "./framework.js"

const secret = "gcf-replay-secret"
let signed: FrameworkHandle
let down: FrameworkHandle
let tick: FrameworkHandle
let deadPort: number
const redis = rawClient()

beforeAll(async () => {
  await flushTestDb()
  deadPort = await freePort()
  const env = {
    REDIS_URL: testRedisUrl(),
    ENQUEUE_SECRET: secret,
    REDIS_DOWN_URL: `redis://app-user:pw@127.0.0.1:${deadPort}/3`
  }
  ;[signed, down, tick] = await Promise.all([
    startFunction("enqueueSigned", env),
    startFunction("enqueueDown", env),
    startFunction("tickSigned", env)
  ])
}, 150_000)
afterAll(async () => {
  await Promise.all([signed?.stop(), down?.stop(), tick?.stop()])
  redis.disconnect()
})

const post = async (url: string, body: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })
  const text = await res.text()
  return { status: res.status, text, body: text.startsWith("{") ? JSON.parse(text) : text }
}
const sign = (body: string, path = "/", at = Date.now()) => ({
  "x-asynq-signature": signBody(secret, { method: "POST", path, body }, at)
})

describe("Cloud Functions endpoints: authentication before Redis", () => {
  it("with Redis down: 401 for an unauthenticated caller; 503 without the Redis address for an accepted one (logged instead)", async () => {
    const body = JSON.stringify({ type: "x" })
    const missing = await post(down.url, body)
    expect(missing.status).toBe(401)
    expect(missing.body.error.message).toBe("missing x-asynq-secret header")
    expect((await post(down.url, body, { "x-asynq-secret": "wrong" })).status).toBe(401)
    const accepted = await post(down.url, body, { "x-asynq-secret": secret })
    expect(accepted.status).toBe(503)
    expect(accepted.body.error).toEqual({
      code: "backend_unavailable",
      message: "queue backend unavailable; try again later"
    })
    for (const part of ["app-user", "127.0.0.1", String(deadPort), "redis://"])
      expect(accepted.text).not.toContain(part)
    expect(down.output()).toContain(`127.0.0.1:${deadPort}`)
  })
})

describe("Cloud Functions endpoints: HMAC signatures", () => {
  it("enqueue writes a signed request once: 3 sends → 1 task, each resend answered with the first answer (issue 29); binds the path", async () => {
    const body = JSON.stringify({ type: "replayed", options: { queue: "gcf-replay" } })
    const headers = sign(body)
    const answers = [
      await post(signed.url, body, headers),
      await post(signed.url, body, headers),
      await post(signed.url, body, headers)
    ]
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
    expect(answers.map((a) => a.body.id)).toEqual(Array(3).fill(answers[0]!.body.id))
    expect(await redis.llen(queueKeys("gcf-replay").pending)).toBe(1)
    // Two requests with the same body signed in the same millisecond are two tasks.
    const at = Date.now()
    expect((await post(signed.url, body, sign(body, "/", at))).status).toBe(200)
    expect((await post(signed.url, body, sign(body, "/", at))).status).toBe(200)
    expect(await redis.llen(queueKeys("gcf-replay").pending)).toBe(3)
    // Signed for "/", sent to "/enqueue": refused; signed for "/enqueue": accepted.
    const pathBody = JSON.stringify({ type: "pathbound", options: { queue: "gcf-path" } })
    expect((await post(`${signed.url}/enqueue`, pathBody, sign(pathBody, "/"))).status).toBe(401)
    expect((await post(`${signed.url}/enqueue`, pathBody, sign(pathBody, "/enqueue"))).status).toBe(200)
    expect(await redis.llen(queueKeys("gcf-path").pending)).toBe(1)
  })

  it("the HTTP tick refuses a replayed signature", async () => {
    const headers = sign("{}")
    expect((await post(tick.url, "{}", headers)).status).toBe(200)
    const again = await post(tick.url, "{}", headers)
    expect(again.status).toBe(401)
    expect(again.body.error.code).toBe("replayed_signature")
  })
})
