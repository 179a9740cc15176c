import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDrainFunction } from "../../adapters/gcp-functions/drainFunction.js"
import { createEnqueueFunction } from "../../adapters/gcp-functions/enqueueFunction.js"
import { createTickHttpFunction } from "../../adapters/gcp-functions/tickFunction.js"
import { signBody } from "../../adapters/shared/auth.js"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { type FrameworkHandle, startFunction } from "./framework.js"

const secret = "gcf-secret"
let plain: FrameworkHandle
let signed: FrameworkHandle
const redis = rawClient()

beforeAll(async () => {
  await flushTestDb()
  const env = { REDIS_URL: testRedisUrl(), ENQUEUE_SECRET: secret }
  ;[plain, signed] = await Promise.all([startFunction("enqueue", env), startFunction("enqueueSigned", env)])
}, 150_000)
afterAll(async () => {
  await Promise.all([plain?.stop(), signed?.stop()])
  redis.disconnect()
})

const post = async (f: FrameworkHandle, body: string, headers: Record<string, string> = {}, method = "POST") => {
  const res = await fetch(f.url, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(method === "GET" ? {} : { body })
  })
  const text = await res.text()
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text }
}

describe("Cloud Functions enqueue endpoint (Functions Framework over HTTP)", () => {
  it("enqueues and answers with the TaskInfo", async () => {
    const res = await post(
      plain,
      JSON.stringify({ type: "report", payload: { day: 1 }, options: { queue: "reports" } }),
      { "x-asynq-secret": secret }
    )
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ type: "report", queue: "reports", state: "pending" })
    expect(await redis.lrange(queueKeys("reports").pending, 0, -1)).toEqual([res.body.id])
  })

  it("a signed request without a content-type: the raw body is read and the signature matches (issue 18)", async () => {
    const body = JSON.stringify({ type: "no-content-type", options: { queue: "reports" } })
    const sig = signBody(secret, { method: "POST", path: "/", body }, Date.now())
    const res = await fetch(signed.url, {
      method: "POST",
      headers: { "x-asynq-signature": sig },
      body: new TextEncoder().encode(body)
    })
    const text = await res.text()
    expect(res.status, text).toBe(200)
    expect(JSON.parse(text)).toMatchObject({ type: "no-content-type", queue: "reports", state: "pending" })
  })

  it("rejects missing/wrong credentials with 401 and bad bodies with 400", async () => {
    expect((await post(plain, JSON.stringify({ type: "x" }))).status).toBe(401)
    expect((await post(plain, JSON.stringify({ type: "x" }), { "x-asynq-secret": "bad" })).status).toBe(401)
    const bad = await post(plain, JSON.stringify({ type: 42 }), { "x-asynq-secret": secret })
    expect(bad.status).toBe(400)
    expect(bad.body.error.message).toContain("type")
    expect((await post(plain, "", { "x-asynq-secret": secret }, "GET")).status).toBe(405)
  })

  it("every HTTP function refuses to be created with an empty secret", () => {
    const auth = { kind: "hmac", secret: "" } as const
    expect(() => createEnqueueFunction({ auth })).toThrow("enqueue function: auth.secret is empty")
    expect(() => createTickHttpFunction({ queues: ["default"], auth })).toThrow("tick function: auth.secret is empty")
    expect(() => createDrainFunction({ queues: ["default"], handler: () => {}, timeoutMs: 60_000, auth })).toThrow(
      "drain function: auth.secret is empty"
    )
  })

  it("verifies an HMAC signature over the raw body", async () => {
    const body = JSON.stringify({ type: "signed" })
    expect(
      (
        await post(signed, body, {
          "x-asynq-signature": signBody(secret, { method: "POST", path: "/", body }, Date.now())
        })
      ).status
    ).toBe(200)
    const bad = await post(signed, body, {
      "x-asynq-signature": signBody("other", { method: "POST", path: "/", body }, Date.now())
    })
    expect(bad.status).toBe(401)
    expect(bad.body.error.message).toContain("does not match")
  })
})
