/**
 * effect-asynq/edge over the loopback REST gateway (test/support/restGateway.ts) in front of this
 * file's redis-server database, run in Node: wire parity with the TCP client, options and errors,
 * the NOSCRIPT fallback, and the maintenance tick. The same code in workerd and @edge-runtime/vm:
 * workerd.test.ts, edgeRuntime.test.ts.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createClient as createTcpClient } from "../../src/client.js"
import { Effect } from "effect"
import { createClient, createTick, enqueue, forward, httpRedisLayer } from "../../src/edge/index.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { makeMsg, putActive, putGrouped, putInZset, zsetOf } from "../support/arrange.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { type RestGateway, startRestGateway } from "../support/restGateway.js"
import { parityCases, taskSnapshot } from "./parity.js"
import { isCommandTimeout } from "../../src/redis/errors.js"
import { freePort } from "../support/redis-server.js"

let gateway: RestGateway
let raw: IORedis
const tcp = () => createTcpClient({ url: testRedisUrl() })

beforeAll(async () => {
  gateway = await startRestGateway(testRedisUrl())
  raw = rawClient()
})
afterAll(async () => {
  await gateway.close()
  raw.disconnect()
})
beforeEach(() => flushTestDb())

describe("wire parity with the TCP client", () => {
  for (const { name, payload, options } of parityCases) {
    it(`writes the same bytes: ${name}`, async () => {
      const queue = (options.queue as string | undefined) ?? "default"
      const client = tcp()
      const viaTcp = await client
        .enqueue("parity:task", payload, { ...options, taskId: "same-id" })
        .finally(() => client.close())
      const tcpState = await taskSnapshot(raw, queue, "same-id")
      await flushTestDb()
      const viaHttp = await createClient({ url: gateway.url, token: gateway.token }).enqueue("parity:task", payload, {
        ...options,
        taskId: "same-id"
      })
      const httpState = await taskSnapshot(raw, queue, "same-id")
      expect(httpState).toEqual(tcpState)
      expect(httpState.fields.msg).toMatch(/^[0-9a-f]+$/)
      expect({ ...viaHttp, nextProcessAt: undefined }).toEqual({ ...viaTcp, nextProcessAt: undefined })
    })
  }
})

describe("createClient over HTTP", () => {
  it("enqueueMany: one request, each item its own outcome (invalid and duplicate items rejected, the others written)", async () => {
    const client = createClient({ url: gateway.url, token: gateway.token })
    const before = gateway.requests.length
    const out = await client.enqueueMany([
      { type: "a", payload: { i: 1 } },
      { type: "b", payload: { i: 2 }, options: { maxRetry: -1 } },
      { type: "c", payload: "same", options: { unique: 60_000 } },
      { type: "c", payload: "same", options: { unique: 60_000 } }
    ])
    expect(out.map((o) => (o.ok ? "ok" : o.error._tag))).toEqual(["ok", "InvalidArgument", "ok", "DuplicateTask"])
    expect(gateway.requests.length - before).toBe(1)
    // The queue's three valid items went as one enqueueBatch call (not one enqueue call each).
    const sent = gateway.requests.at(-1)!.commands.map((c) => String(c[0]))
    expect(sent.filter((c) => c === "EVAL" || c === "EVALSHA")).toHaveLength(sent.length)
    expect(sent.length).toBeLessThanOrEqual(2)
    expect(await raw.llen(queueKeys("default").pending)).toBe(2)
  })

  it("a wrong token: RedisError naming the refusal, nothing written", async () => {
    const error = await createClient({ url: gateway.url, token: "wrong" })
      .enqueue("t", {})
      .then(
        () => undefined,
        (e: unknown) => e
      )
    expect(error).toMatchObject({ _tag: "RedisError" })
    expect((error as Error).message).toMatch(/refused the token \(HTTP 401\)/)
    expect(await raw.exists("asynq:queues")).toBe(0)
  })

  it("unusable url or token: RedisConnectionError on every call, saying what is wrong", async () => {
    const noScheme = await createClient({ url: "127.0.0.1:8080", token: "x" })
      .enqueue("t")
      .catch((e: unknown) => e)
    expect(noScheme).toMatchObject({ _tag: "RedisConnectionError" })
    const noToken = await createClient({ url: gateway.url, token: "" })
      .enqueue("t")
      .catch((e: unknown) => e)
    expect(noToken).toMatchObject({ _tag: "RedisConnectionError", message: expect.stringMatching(/token is required/) })
  })

  it("payloads of every length modulo 3 (base64 padding) reach Redis byte for byte", async () => {
    const client = createClient({ url: gateway.url, token: gateway.token })
    for (let n = 1; n <= 7; n++) {
      const payload = Uint8Array.from({ length: n }, (_, i) => 0xff - i)
      await client.enqueue("bytes", payload, { taskId: `len-${n}` })
      const stored = decodeTaskMessage(
        new Uint8Array((await raw.hgetBuffer(queueKeys("default").task(`len-${n}`), "msg"))!)
      )
      expect({ n, payload: stored.payload && [...stored.payload] }).toEqual({ n, payload: [...payload] })
    }
  })

  it("a lost reply (the connection closed after the write ran): sent again as the same write, one task, no false TaskIdConflict", async () => {
    const client = createClient({ url: gateway.url, token: gateway.token })
    await client.enqueue("warm", 0) // the queue is registered: the next enqueue is one request
    gateway.dropAnswers(1)
    const before = gateway.requests.length
    const info = await client.enqueue("lost:reply", { n: 1 })
    expect(gateway.requests.length - before).toBe(2)
    expect(await raw.lrange(queueKeys("default").pending, 0, -1)).toEqual([info.id, expect.any(String)])
    expect(await raw.hget(queueKeys("default").task(info.id), "state")).toBe("pending")
  })

  it("a request that gets no answer within its share of timeoutMs is a lost reply: sent again as the same write within the call's time, one task", async () => {
    const client = createClient({ url: gateway.url, token: gateway.token, timeoutMs: 1500 })
    await client.enqueue("warm", 0)
    gateway.stallAnswers(1)
    const info = await client.enqueue("stalled:reply", { n: 1 })
    expect(await raw.lrange(queueKeys("default").pending, 0, -1)).toEqual([info.id, expect.any(String)])
    const error = await createClient({ url: gateway.url, token: gateway.token, timeoutMs: 0 })
      .enqueue("t")
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ _tag: "RedisConnectionError", message: expect.stringMatching(/timeoutMs must be/) })
  })

  it("a gateway that accepts and never answers: the whole enqueue fails within timeoutMs (resends included), a RedisError naming the endpoint; the writes that ran made one task", async () => {
    const timeoutMs = 1500
    const client = createClient({ url: gateway.url, token: gateway.token, timeoutMs })
    await client.enqueue("warm", 0)
    gateway.stallAnswers(1000)
    const before = gateway.requests.length
    const started = performance.now()
    const error = await client
      .enqueue("never:answered", { secret: "payload-never-in-messages" }, { taskId: "never-answered" })
      .catch((e: unknown) => e)
    const elapsed = performance.now() - started
    gateway.stallAnswers(0)
    expect(error).toMatchObject({ _tag: "RedisError" })
    expect(isCommandTimeout(error)).toBe(true)
    expect((error as Error).message).toMatch(
      new RegExp(`^Command timed out: .* got no reply from ${gateway.url} within \\d+ ms`)
    )
    expect((error as Error).message).not.toContain("payload-never")
    // Generous: the call's bound is timeoutMs; it used to take 3 × timeoutMs.
    expect(elapsed).toBeLessThan(timeoutMs + 1000)
    expect(gateway.requests.length - before).toBeLessThanOrEqual(3)
    // The gateway ran each request it never answered: the same write, so one task.
    expect(
      (await raw.lrange(queueKeys("default").pending, 0, -1)).filter((id) => id === "never-answered")
    ).toHaveLength(1)
  })

  it("an endpoint that cannot be reached: the RedisError names it", async () => {
    const closed = await freePort()
    const error = await createClient({ url: `http://127.0.0.1:${closed}`, token: "t" })
      .enqueue("t")
      .catch((e: unknown) => e)
    expect(error).toMatchObject({
      _tag: "RedisError",
      message: expect.stringContaining(`cannot reach http://127.0.0.1:${closed}: fetch failed`)
    })
  })

  it("invalid options: InvalidArgument before any request", async () => {
    const before = gateway.requests.length
    const error = await createClient({ url: gateway.url, token: gateway.token })
      .enqueue("t", {}, { queue: "" })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ _tag: "InvalidArgument", field: "queue" })
    expect(gateway.requests.length).toBe(before)
  })

  it("first call of a script is an EVAL, later ones EVALSHA; after SCRIPT FLUSH the NOSCRIPT answer is sent again as EVAL", async () => {
    const client = createClient({ url: gateway.url, token: gateway.token })
    const commandsOf = (from: number) =>
      gateway.requests.slice(from).flatMap((r) => r.commands.map((c) => String((c as Array<unknown>)[0])))
    let mark = gateway.requests.length
    await client.enqueue("t", 1)
    expect(commandsOf(mark)).toEqual(["EVAL", "EVAL"]) // registerQueue + enqueue, one pipeline
    mark = gateway.requests.length
    await client.enqueue("t", 2)
    expect(commandsOf(mark)).toEqual(["EVALSHA"])
    await raw.script("FLUSH")
    mark = gateway.requests.length
    const info = await client.enqueue("t", 3)
    expect(commandsOf(mark)).toEqual(["EVALSHA", "EVAL"])
    expect(await raw.lrange(queueKeys("default").pending, 0, -1)).toContain(info.id)
    expect(await raw.llen(queueKeys("default").pending)).toBe(3)
  })
})

describe("createTick over HTTP", () => {
  it("forwards due scheduled tasks and recovers expired leases; nothing else moves", async () => {
    const nowSec = Math.floor(Date.now() / 1000)
    await putInZset(raw, makeMsg("default", "due"), "scheduled", nowSec - 5)
    await putInZset(raw, makeMsg("default", "not-yet"), "scheduled", nowSec + 3600)
    await putActive(raw, makeMsg("default", "stalled"), nowSec - 120)
    await putActive(raw, makeMsg("default", "leased"), nowSec + 60)
    await raw.sadd("asynq:queues", "default")
    const tick = createTick({ redis: { url: gateway.url, token: gateway.token }, queues: ["default"] })
    const summary = await tick()
    expect(summary.errors).toEqual([])
    expect(summary.forwarded?.moved).toBe(1)
    expect(summary.recovered).toMatchObject({ retried: 1, archived: 0 })
    const k = queueKeys("default")
    expect(await raw.lrange(k.pending, 0, -1)).toEqual(["due"])
    expect((await zsetOf(raw, k.scheduled)).map(([m]) => m)).toEqual(["not-yet"])
    expect((await zsetOf(raw, k.retry)).map(([m]) => m)).toEqual(["stalled"])
    expect((await zsetOf(raw, k.lease)).map(([m]) => m)).toEqual(["leased"])
    const stalled = decodeTaskMessage(new Uint8Array((await raw.hgetBuffer(k.task("stalled"), "msg"))!))
    expect(stalled).toMatchObject({ retried: 1, errorMsg: "asynq: task lease expired" })
  })
})

describe("createTick with aggregation over HTTP", () => {
  it("a group at its max size becomes one aggregated task; the group's tasks are gone", async () => {
    const nowSec = Math.floor(Date.now() / 1000)
    for (const id of ["g1", "g2", "g3"]) await putGrouped(raw, makeMsg("agg", id), "digest", nowSec - 1)
    await raw.sadd("asynq:queues", "agg")
    const tick = createTick({
      redis: { url: gateway.url, token: gateway.token },
      queues: ["agg"],
      aggregation: {
        maxSize: 3,
        gracePeriodMs: 60_000,
        aggregator: (group, tasks) => ({ type: "digest:send", payload: { group, ids: tasks.map((t) => t.id).sort() } })
      }
    })
    const summary = await tick()
    expect(summary.errors).toEqual([])
    expect(summary.aggregated).toMatchObject({ enqueued: 1, tasks: 3 })
    const k = queueKeys("agg")
    const [id] = await raw.lrange(k.pending, 0, -1)
    const msg = decodeTaskMessage(new Uint8Array((await raw.hgetBuffer(k.task(id!), "msg"))!))
    expect({ type: msg.type, payload: new TextDecoder().decode(msg.payload) }).toEqual({
      type: "digest:send",
      payload: JSON.stringify({ group: "digest", ids: ["g1", "g2", "g3"] })
    })
    expect(await raw.exists(k.task("g1"), k.task("g2"), k.task("g3"), k.group("digest"))).toBe(0)
  })
})

describe("httpRedisLayer: the Effect steps over HTTP", () => {
  it("enqueue and forward run unchanged; an unusable token fails the layer with RedisConnectionError", async () => {
    const layer = httpRedisLayer({ url: gateway.url, token: gateway.token })
    const info = await Effect.runPromise(
      enqueue("layer:task", { a: 1 }, { processAt: Date.now() - 1000 + 3_600_000, taskId: "later" }).pipe(
        Effect.provide(layer)
      )
    )
    expect(info).toMatchObject({ id: "later", state: "scheduled" })
    await raw.zadd(queueKeys("default").scheduled, Math.floor(Date.now() / 1000) - 1, "later")
    const moved = await Effect.runPromise(forward({ queues: ["default"] }).pipe(Effect.provide(layer)))
    expect(moved).toMatchObject({ moved: 1, byQueue: { default: 1 } })
    expect(await raw.lrange(queueKeys("default").pending, 0, -1)).toEqual(["later"])
    const failed = await Effect.runPromise(
      Effect.flip(enqueue("t", 1).pipe(Effect.provide(httpRedisLayer({ url: "ftp://x", token: "t" }))))
    )
    expect(failed).toMatchObject({
      _tag: "RedisConnectionError",
      message: expect.stringMatching(/scheme must be https: or http:/)
    })
  })
})
