/**
 * Every call to a single Redis node is bounded by default, with real servers: a frozen server
 * (SIGSTOP: its connections stay open, nothing is answered) fails a warm call after the default
 * command timeout (5000 ms) with a RedisError whose cause is a CommandTimeout naming the server and
 * the operation, never the payload, through createClient (the light transport) and a worker's
 * Broker (ioredis); a timed-out enqueue makes no duplicate once the server thaws (the lost-reply
 * rule). A server restarted with a dataset to load (kept slow by `key-load-delay`, a real
 * redis-server setting) answers LOADING: a call waits that out for `loadingTimeoutMs`, or fails
 * saying the server is still loading (an answer: nothing ran, nothing is resent).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { Redis as IORedis } from "ioredis"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { isLostReply } from "../../src/broker/lostReply.js"
import { createClient } from "../../src/client.js"
import { CommandTimeout, isCommandTimeout, type RedisError } from "../../src/redis/errors.js"
import { defaultCommandTimeoutMs } from "../../src/redis/options.js"
import { queueKeys } from "../../src/wire/keys.js"
import {
  freePort,
  type RedisServerHandle,
  redisServerBinary,
  startRedisServer,
  waitForPing
} from "../support/redis-server.js"
import { openBroker } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"

const failure = <A>(p: Promise<A>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e
  )
const runFailure = <A, E>(effect: Effect.Effect<A, E>): Promise<unknown> => failure(Effect.runPromise(effect))

describe("a frozen single node (SIGSTOP): calls fail within the default command timeout", () => {
  let server: RedisServerHandle
  let raw: IORedis
  beforeAll(async () => {
    server = await startRedisServer()
    raw = new IORedis(server.url)
  })
  afterEach(() => void server.process.kill("SIGCONT"))
  afterAll(async () => {
    raw.disconnect()
    await server.stop()
  })

  it("createClient: a warm enqueue fails with a RedisError (cause CommandTimeout) naming the server and the op, not the payload; once thawed, one task", async () => {
    const client = createClient({ url: server.url })
    try {
      await client.enqueue("warm", 0)
      server.process.kill("SIGSTOP")
      const error = (await failure(
        client.enqueue("frozen", { secret: "payload-never-in-messages" }, { taskId: "frozen-1" })
      )) as RedisError
      server.process.kill("SIGCONT")
      expect(error).toMatchObject({ _tag: "RedisError", op: "script enqueue" })
      expect(error.cause).toBeInstanceOf(CommandTimeout)
      expect(error.message).toBe(
        `Command timed out: script enqueue got no reply from ${server.url} within ${defaultCommandTimeoutMs} ms (commandTimeoutMs); it may still run on the server`
      )
      expect(error.message).not.toContain("payload-never")
      // A timeout is a lost reply: the write was sent again as the same write; all of them ran once
      // the server thawed, and made one task.
      expect(isLostReply(error)).toBe(true)
      await waitFor(
        "the frozen enqueue to land",
        () => raw.hget(queueKeys("default").task("frozen-1"), "state"),
        (s) => s === "pending"
      )
      expect((await raw.lrange(queueKeys("default").pending, 0, -1)).filter((id) => id === "frozen-1")).toHaveLength(1)
      // The client works again.
      expect((await client.enqueue("after", 1)).state).toBe("pending")
    } finally {
      server.process.kill("SIGCONT")
      await client.close()
    }
  }, 60_000)

  it("a worker's Broker (ioredis): a script call, a batch and a plain command each fail with a CommandTimeout naming the server", async () => {
    const { broker, close } = await openBroker({ url: server.url })
    try {
      expect(await Effect.runPromise(broker.redis.command("ping", ["PING"]))).toBe("PONG")
      server.process.kill("SIGSTOP")
      const [script, batch, command] = await Promise.all([
        runFailure(broker.redis.script("registerQueue", ["asynq:queues"], ["frozen"])),
        Effect.runPromise(
          broker.redis.scriptBatch([
            { script: "registerQueue", keys: ["asynq:queues"], args: ["a"] },
            { script: "registerQueue", keys: ["asynq:queues"], args: ["b"] }
          ])
        ),
        runFailure(broker.redis.command("llen", ["LLEN", "asynq:{default}:pending"]))
      ])
      server.process.kill("SIGCONT")
      expect(script).toMatchObject({
        _tag: "RedisError",
        op: "script registerQueue",
        message: expect.stringContaining(`no reply from ${server.url} within ${defaultCommandTimeoutMs} ms`)
      })
      expect(isCommandTimeout(script)).toBe(true)
      for (const r of batch) {
        expect(r.ok).toBe(false)
        if (!r.ok) expect(isCommandTimeout(r.error)).toBe(true)
      }
      expect(command).toMatchObject({
        _tag: "RedisError",
        op: "llen",
        message: expect.stringMatching(
          /^Command timed out: llen got no reply from redis:\/\/127\.0\.0\.1:\d+ within 5000 ms/
        )
      })
      // Answers again once thawed.
      expect(await Effect.runPromise(broker.redis.command("ping", ["PING"]))).toBe("PONG")
    } finally {
      server.process.kill("SIGCONT")
      await close()
    }
  }, 60_000)
})

/** How many keys the dataset has: with `key-load-delay` 200 µs, loading takes a few seconds. */
const datasetKeys = 6000

describe("a server loading its dataset after a restart (LOADING)", () => {
  let dir: string
  let port: number
  let proc: ChildProcess | undefined
  const url = () => `redis://127.0.0.1:${port}`

  const start = (extra: ReadonlyArray<string>) => {
    proc = spawn(
      redisServerBinary(),
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, ...extra],
      { stdio: "ignore" }
    )
  }
  const kill = async () => {
    const p = proc
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return
    await new Promise<void>((resolve) => {
      p.once("exit", () => resolve())
      p.kill("SIGKILL")
    })
  }
  /** What a fresh connection gets for PING: "PONG", the LOADING answer, or why it could not ask. */
  const ping = async (): Promise<string> => {
    const c = new IORedis(url(), {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableReadyCheck: false
    })
    c.on("error", () => {})
    try {
      await c.connect()
      return await c.ping()
    } catch (e) {
      return (e as Error).message
    } finally {
      c.disconnect()
    }
  }
  /** Kills the server and starts it again on its port, loading the saved dataset slowly; resolves once it answers LOADING. */
  const restartLoading = async () => {
    await kill()
    start(["--key-load-delay", "200", "--loading-process-events-interval-bytes", "1024"])
    await waitFor("the restarted server to answer LOADING", ping, (r) => r.startsWith("LOADING"), { timeoutMs: 10_000 })
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "effect-asynq-loading-"))
    port = await freePort()
    start([])
    await waitForPing(port)
    const c = new IORedis(url())
    await c.eval(`for i = 1, ${datasetKeys} do redis.call('SET', 'filler:' .. i, 'x') end`, 0)
    await c.save()
    c.disconnect()
  }, 30_000)
  afterEach(async () => {
    // Back to a server that answers, for the next test.
    await waitFor("the server to finish loading", ping, (r) => r === "PONG", { timeoutMs: 30_000 }).catch(
      () => undefined
    )
  }, 40_000)
  afterAll(async () => {
    await kill()
    rmSync(dir, { recursive: true, force: true })
  })

  it("createClient (light transport): a warm client's enqueue waits the loading out and writes one task", async () => {
    const client = createClient({ url: url(), loadingTimeoutMs: 30_000 })
    try {
      await client.enqueue("warm", 0)
      await restartLoading()
      const info = await client.enqueue("after:restart", { n: 1 })
      const raw = new IORedis(url())
      expect(await raw.lrange(queueKeys("default").pending, 0, -1)).toEqual([info.id])
      raw.disconnect()
    } finally {
      await client.close()
    }
  }, 60_000)

  it("a worker's Broker (ioredis): a script call and a batch wait the loading out", async () => {
    await waitFor("the server to answer", ping, (r) => r === "PONG", { timeoutMs: 30_000 })
    const { broker, close } = await openBroker({ url: url(), loadingTimeoutMs: 30_000 })
    try {
      expect(await Effect.runPromise(broker.redis.command("ping", ["PING"]))).toBe("PONG")
      await restartLoading()
      const [script, batch, command] = await Promise.all([
        Effect.runPromise(broker.redis.script("registerQueue", ["asynq:queues"], ["one"])),
        Effect.runPromise(
          broker.redis.scriptBatch([
            { script: "registerQueue", keys: ["asynq:queues"], args: ["two"] },
            { script: "registerQueue", keys: ["asynq:queues"], args: ["three"] }
          ])
        ),
        Effect.runPromise(broker.redis.command("dbsize", ["DBSIZE"]))
      ])
      expect(script).toBeDefined()
      expect(batch.map((r) => r.ok)).toEqual([true, true])
      expect(command).toBeGreaterThanOrEqual(datasetKeys)
      const raw = new IORedis(url())
      expect((await raw.smembers("asynq:queues")).sort()).toEqual(expect.arrayContaining(["one", "three", "two"]))
      raw.disconnect()
    } finally {
      await close()
    }
  }, 60_000)

  it("past loadingTimeoutMs the call fails saying the server is still loading; nothing ran, nothing was resent", async () => {
    await waitFor("the server to answer", ping, (r) => r === "PONG", { timeoutMs: 30_000 })
    const client = createClient({ url: url(), loadingTimeoutMs: 200 })
    try {
      await client.enqueue("warm", 0)
      await restartLoading()
      const error = (await failure(
        client.enqueue("while:loading", { n: 1 }, { taskId: "while-loading" })
      )) as RedisError
      expect(error).toMatchObject({ _tag: "RedisError", op: "script enqueue" })
      expect(error.message).toMatch(
        new RegExp(
          `^Redis at ${url()} is still loading its dataset after \\d+ ms of retries \\(loadingTimeoutMs 200\\): LOADING`
        )
      )
      expect(isLostReply(error)).toBe(false)
      await waitFor("the server to finish loading", ping, (r) => r === "PONG", { timeoutMs: 30_000 })
      const raw = new IORedis(url())
      expect(await raw.exists(queueKeys("default").task("while-loading"))).toBe(0)
      raw.disconnect()
    } finally {
      await client.close()
    }
  }, 60_000)
})
