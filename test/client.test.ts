import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Redis as IORedisClient, type Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ClientClosed, createClient, DuplicateTask, InvalidArgument, TaskIdConflict } from "../src/client.js"
import { clientUsesLightTransport } from "../src/runtime/promiseRuntime.js"
import { queueKeys } from "../src/wire/keys.js"
import { decodeTaskMessage } from "../src/wire/TaskMessage.js"
import { freePort, redisServerBinary, waitForPing } from "./support/redis-server.js"
import { flushTestDb, rawClient, testDb, testRedisUrl } from "./support/redis.js"
import { waitFor } from "./support/waitFor.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

/** Connections to this file's database other than the raw checking client. */
const otherConnections = async () => {
  const me = await c.client("ID")
  const list = (await c.client("LIST")) as string
  return list.split("\n").filter((l) => l.includes(` db=${testDb()} `) && !l.startsWith(`id=${me} `)).length
}

describe("createClient (Promise facade)", () => {
  it("connects lazily on the first call, reuses one connection, and enqueues like the steps", async () => {
    const before = await otherConnections()
    const client = createClient({ url: testRedisUrl() })
    expect(await otherConnections()).toBe(before)
    const info = await client.enqueue("email:deliver", { userId: 42 }, { queue: "critical", processIn: 60_000 })
    expect(info).toMatchObject({ queue: "critical", type: "email:deliver", state: "scheduled", maxRetry: 25 })
    expect(await c.zscore(queueKeys("critical").scheduled, info.id)).not.toBeNull()
    await client.enqueue("email:deliver", { userId: 43 }, { queue: "critical" })
    await client.enqueue("email:deliver", { userId: 44 })
    expect(await otherConnections()).toBe(before + 1)
    await client.close()
    expect(await otherConnections()).toBe(before)
  })

  it("connect() opens the connection before any call (once), fails for a wrong address, and rejects after close()", async () => {
    const before = await otherConnections()
    const client = createClient({ url: testRedisUrl() })
    await client.connect()
    expect(await otherConnections()).toBe(before + 1)
    await client.connect()
    await client.enqueue("t", undefined, { queue: "cl-connect" })
    expect(await otherConnections()).toBe(before + 1)
    await client.close()
    expect(await client.connect().catch((e: unknown) => e)).toBeInstanceOf(ClientClosed)
    const port = await freePort()
    const nowhere = createClient({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 1000 })
    expect(await nowhere.connect().catch((e: unknown) => e)).toMatchObject({ _tag: "RedisConnectionError" })
    await nowhere.close()
  })

  it("the first enqueue to a queue registers it in asynq:queues; a failed registration loses no task and is tried again", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      await client.enqueue("t", 1, { queue: "cl-reg-a" })
      expect(await c.sismember("asynq:queues", "cl-reg-a")).toBe(1)
      // asynq:queues of the wrong type: SADD fails, the task is written all the same.
      await c.del("asynq:queues")
      await c.set("asynq:queues", "not a set")
      const info = await client.enqueue("t", 2, { queue: "cl-reg-b" })
      expect(await c.lrange(queueKeys("cl-reg-b").pending, 0, -1)).toEqual([info.id])
      await c.del("asynq:queues")
      // Not marked registered: the next enqueue to that queue registers it.
      await client.enqueue("t", 3, { queue: "cl-reg-b" })
      expect(await c.smembers("asynq:queues")).toEqual(["cl-reg-b"])
    } finally {
      await c.del("asynq:queues")
      await client.close()
    }
  })

  it("rejects with the typed error objects (with _tag and message)", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      await client.enqueue("report", "p", { queue: "cl-err", unique: 60_000, taskId: "r1" })
      const dup = await client.enqueue("report", "p", { queue: "cl-err", unique: 60_000 }).catch((e: unknown) => e)
      expect(dup).toBeInstanceOf(DuplicateTask)
      expect(dup).toMatchObject({ _tag: "DuplicateTask", queue: "cl-err" })
      const conflict = await client
        .enqueue("report", "other", { queue: "cl-err", taskId: "r1" })
        .catch((e: unknown) => e)
      expect(conflict).toBeInstanceOf(TaskIdConflict)
      expect((conflict as TaskIdConflict).message).toBe(
        `task ID conflicts with another task: a task with id "r1" already exists in queue "cl-err"`
      )
      const invalid = await client.enqueue("report", "p", { maxRetry: -3 }).catch((e: unknown) => e)
      expect(invalid).toBeInstanceOf(InvalidArgument)
      expect(invalid).toMatchObject({ _tag: "InvalidArgument", field: "maxRetry" })
      expect(invalid).toBeInstanceOf(Error)
    } finally {
      await client.close()
    }
  })

  it("out-of-bounds options and lone surrogates reject with InvalidArgument naming the field; nothing is written", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      const cases = [
        [{ queue: "cl-bounds", processAt: 1e300 }, "processAt"],
        [{ queue: "cl-bounds", retention: 1e300 }, "retention"],
        [{ queue: "cl-bounds", processIn: 1e300 }, "processIn"],
        [{ queue: "cl-bounds\uD800" }, "queue"]
      ] as const
      for (const [options, field] of cases) {
        const e = await client.enqueue("t", "p", options).catch((x: unknown) => x)
        expect(e).toBeInstanceOf(InvalidArgument)
        expect(e).toMatchObject({ _tag: "InvalidArgument", field })
      }
      const out = await client.enqueueMany([
        { type: "t", options: { queue: "cl-bounds", deadline: 1e300 } },
        { type: "t", options: { queue: "cl-bounds" } }
      ])
      expect(out.map((o) => (o.ok ? o.info.state : `${o.error._tag}(${(o.error as InvalidArgument).field})`))).toEqual([
        "InvalidArgument(deadline)",
        "pending"
      ])
      expect(await c.llen(queueKeys("cl-bounds").pending)).toBe(1)
      expect(await c.keys("asynq:{cl-bounds\uD800}*")).toEqual([])
    } finally {
      await client.close()
    }
  })

  it("enqueueMany gives one outcome per item, in order", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      const out = await client.enqueueMany([
        { type: "a", payload: 1, options: { queue: "cl-many", taskId: "m1" } },
        { type: "a", payload: 2, options: { queue: "cl-many", taskId: "m1" } },
        { type: "a", options: { queue: "" } },
        { type: "b", payload: "x", options: { queue: "cl-many", group: "g" } }
      ])
      expect(out.map((o) => (o.ok ? o.info.state : o.error._tag))).toEqual([
        "pending",
        "TaskIdConflict",
        "InvalidArgument",
        "aggregating"
      ])
      expect(await c.lrange(queueKeys("cl-many").pending, 0, -1)).toEqual(["m1"])
    } finally {
      await client.close()
    }
  })

  it("long payload texts (ASCII and not, strings and JSON, one by one and in enqueueMany) are stored as their UTF-8 bytes, as TaskInfo gives them", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      const payloads: ReadonlyArray<unknown> = [
        { s: "a".repeat(10_000) },
        { s: `${"b".repeat(3000)}żółć` },
        "c".repeat(700),
        `${"d".repeat(2000)}🎉`,
        { s: "e".repeat(600) }
      ]
      const utf8 = (p: unknown) => new TextEncoder().encode(typeof p === "string" ? p : JSON.stringify(p))
      const infos = [
        ...(await Promise.all(payloads.map((p) => client.enqueue("t", p, { queue: "cl-text" })))),
        ...(
          await client.enqueueMany(payloads.map((p) => ({ type: "t", payload: p, options: { queue: "cl-text" } })))
        ).map((o) => {
          if (!o.ok) throw new Error(o.error.message)
          return o.info
        })
      ]
      for (const [i, info] of infos.entries()) {
        const want = utf8(payloads[i % payloads.length])
        expect(Buffer.from(info.payload!).equals(Buffer.from(want))).toBe(true)
        const stored = await c.hgetBuffer(`${queueKeys("cl-text").taskPrefix}${info.id}`, "msg")
        expect(Buffer.from(decodeTaskMessage(stored!).payload!).equals(Buffer.from(want))).toBe(true)
      }
    } finally {
      await client.close()
    }
  })

  it("long enqueues the socket cannot take at once (Redis stopped: writes it queues) store every payload intact", async () => {
    const port = await freePort()
    const server = spawn(
      redisServerBinary(),
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" }
    )
    const client = createClient({ url: `redis://127.0.0.1:${port}` })
    try {
      await waitForPing(port)
      // Once the queue is registered and the script loaded, each enqueue is one framed EVALSHA.
      await client.enqueue("t", "warm", { queue: "cl-burst" })
      // Redis reads nothing while stopped: the kernel's buffers fill and the socket queues the rest.
      server.kill("SIGSTOP")
      // 100 KB frames (written into the connection's reused frame buffer), 200 of them (20 MB).
      const payloads = Array.from({ length: 200 }, (_, i) =>
        `${i}:`.padEnd(100_000, String.fromCharCode(97 + (i % 26)))
      )
      const written = Promise.all(payloads.map((p) => client.enqueue("t", p, { queue: "cl-burst" })))
      await new Promise((resolve) => setTimeout(resolve, 200))
      server.kill("SIGCONT")
      const infos = await written
      const raw = new IORedisClient(`redis://127.0.0.1:${port}`)
      try {
        for (const [i, info] of infos.entries()) {
          const stored = await raw.hgetBuffer(`${queueKeys("cl-burst").taskPrefix}${info.id}`, "msg")
          expect(Buffer.from(decodeTaskMessage(stored!).payload!).toString("latin1") === payloads[i]).toBe(true)
        }
      } finally {
        raw.disconnect()
      }
    } finally {
      server.kill("SIGCONT")
      await client.close()
      server.kill("SIGKILL")
    }
  })

  it("uses REDIS_URL when no address is given", async () => {
    const saved = process.env.REDIS_URL
    process.env.REDIS_URL = testRedisUrl()
    try {
      const client = createClient()
      const info = await client.enqueue("env:job", undefined, { queue: "cl-env" })
      await client.close()
      expect(await c.lrange(queueKeys("cl-env").pending, 0, -1)).toEqual([info.id])
    } finally {
      if (saved === undefined) delete process.env.REDIS_URL
      else process.env.REDIS_URL = saved
    }
  })

  it("after close(): calls reject with ClientClosed; close() again is harmless; close() before any call is harmless", async () => {
    const client = createClient({ url: testRedisUrl() })
    await client.enqueue("t", undefined, { queue: "cl-closed" })
    await client.close()
    await client.close()
    const e = await client.enqueue("t", undefined, { queue: "cl-closed" }).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(ClientClosed)
    expect((e as ClientClosed).message).toBe("the effect-asynq client is closed; create a new one with createClient()")
    await createClient({ url: testRedisUrl() }).close()
    expect(await c.llen(queueKeys("cl-closed").pending)).toBe(1)
  })

  it("speaks its own RESP2 to a single node and connects again on the next call after its connection is killed; ioredis (RESP3) where asked for", async () => {
    const me = await c.client("ID")
    const connectionsOfDb = async () =>
      ((await c.client("LIST")) as string)
        .split("\n")
        .filter((l) => l.includes(` db=${testDb()} `) && !l.startsWith(`id=${me} `))
    const client = createClient({ url: testRedisUrl() })
    try {
      await client.enqueue("t", 1, { queue: "cl-transport" })
      const [line] = await connectionsOfDb()
      expect(line).toContain(" resp=2")
      const id = /^id=(\d+) /.exec(line!)![1]!
      await c.client("KILL", "ID", id)
      await waitFor("the killed connection to be gone", connectionsOfDb, (l) => l.length === 0)
      await client.enqueue("t", 2, { queue: "cl-transport" })
      const [again] = await connectionsOfDb()
      expect(again).not.toMatch(new RegExp(`^id=${id} `))
      expect(await c.llen(queueKeys("cl-transport").pending)).toBe(2)
    } finally {
      await client.close()
    }
    const viaIoredis = createClient({ url: testRedisUrl(), maxRetriesPerRequest: 3 })
    try {
      await viaIoredis.enqueue("t", 3, { queue: "cl-transport" })
      const [line] = await connectionsOfDb()
      expect(line).toContain(" resp=3")
    } finally {
      await viaIoredis.close()
    }
    expect(clientUsesLightTransport({ url: "rediss://user:pw@cache.example:6380/2" })).toBe(true)
    for (const ioredisOnly of [
      { url: "127.0.0.1:6379" },
      { url: "/run/redis.sock" },
      { url: "redis://127.0.0.1:6379", maxRetriesPerRequest: 5 },
      { cluster: [{ host: "127.0.0.1", port: 7000 }] },
      { sentinel: { sentinels: [{ host: "127.0.0.1", port: 26379 }], name: "main" } }
    ])
      expect(clientUsesLightTransport(ioredisOnly)).toBe(false)
  })

  it("a failed first connection is not remembered: the next call connects once Redis is up", async () => {
    const port = await freePort()
    const client = createClient({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 1000 })
    let server: ChildProcess | undefined
    try {
      const e = await client.enqueue("t", undefined).catch((x: unknown) => x)
      expect(e).toMatchObject({ _tag: "RedisConnectionError" })
      expect((e as Error).message).toContain(`127.0.0.1:${port}`)
      server = spawn(
        redisServerBinary(),
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        { stdio: "ignore" }
      )
      await waitForPing(port)
      const info = await client.enqueue("t", undefined, { queue: "late" })
      expect(info.state).toBe("pending")
      // Redis goes away while the client is connected: the call rejects, naming the address; once
      // Redis is back the next call connects again.
      server.kill("SIGKILL")
      await new Promise((resolve) => server!.once("exit", resolve))
      const down = await client.enqueue("t", undefined, { queue: "late" }).catch((x: unknown) => x)
      expect(down).toMatchObject({ _tag: "RedisError" })
      expect((down as Error).message).toContain(`cannot connect to Redis at redis://127.0.0.1:${port}`)
      server = spawn(
        redisServerBinary(),
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        { stdio: "ignore" }
      )
      await waitForPing(port)
      expect((await client.enqueue("t", undefined, { queue: "late" })).state).toBe("pending")
    } finally {
      await client.close()
      server?.kill("SIGKILL")
    }
  })
})

describe("createClient in a short-lived process", () => {
  const child = fileURLToPath(new URL("./support/client-exit-child.ts", import.meta.url))
  const run = (arg: string) => {
    const p = spawn(process.execPath, ["--import", "tsx", child, arg], {
      env: { ...process.env, REDIS_URL: testRedisUrl() },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    p.stdout.on("data", (d: Buffer) => (out += d.toString()))
    p.stderr.on("data", (d: Buffer) => (err += d.toString()))
    const exited = new Promise<number | null>((resolve) => p.once("exit", (code) => resolve(code)))
    return { p, exited, output: () => out, errors: () => err }
  }
  const within = <A>(p: Promise<A>, ms: number) =>
    Promise.race([p, new Promise<"still running">((r) => setTimeout(() => r("still running"), ms).unref())])

  it("exits on its own after enqueue + close() (nothing keeps the event loop alive)", async () => {
    const r = run("close")
    const code = await within(r.exited, 20_000)
    if (code === "still running") r.p.kill("SIGKILL")
    expect({ code, stderr: r.errors() }).toEqual({ code: 0, stderr: "" })
    const [first, second] = r.output().trim().split("\n")
    // close() is one QUIT: once it resolved, nothing holds the event loop (no forgotten 2 s ioredis timer, no socket).
    expect(JSON.parse(second!)).toEqual({ activeAfterClose: [] })
    const { ids } = JSON.parse(first!) as { ids: Array<string> }
    expect(await c.lrange(queueKeys("child").pending, 0, -1)).toContain(ids[0])
    expect(await c.zscore(queueKeys("child").scheduled, ids[1]!)).not.toBeNull()
  })

  it("(control) without close() the open connection keeps it running", async () => {
    const r = run("no-close")
    // Wait for its output (the enqueues are done), then give it time to exit if it were going to
    // (showing that a process does NOT exit takes real time: `within` below).
    // Starting a tsx child takes long on a loaded machine: the output wait is generous.
    await waitFor(
      "the child's output",
      () => r.output(),
      (out) => out !== "",
      { timeoutMs: 60_000 }
    )
    expect(r.output()).toContain("ids")
    const code = await within(r.exited, 1500)
    r.p.kill("SIGKILL")
    expect(code).toBe("still running")
  }, 90_000)
})
