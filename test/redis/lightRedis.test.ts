/**
 * The light transport (src/redis/lightRedis.ts: RESP2 over node:net, no ioredis) against real
 * redis-servers: script calls and bytes, a pipelined batch with an error for one call, NOSCRIPT
 * recovery, AUTH and SELECT, the command timeout, a dropped connection, and a lost enqueue reply.
 * Private servers (SCRIPT FLUSH, CLIENT PAUSE and requirepass touch no other test).
 */
import "../support/allLua.js"
import * as net from "node:net"
import { Effect, Layer } from "effect"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createEnqueueHandler } from "../../adapters/aws-lambda/enqueueHandler.js"
import { Broker } from "../../src/broker/Broker.js"
import { getTaskInfoScript } from "../../src/broker/getTaskInfo.js"
import { isLostReply } from "../../src/broker/lostReply.js"
import { runScript } from "../../src/broker/script.js"
import { isErrorReply, type RedisConnectionError, type RedisError } from "../../src/redis/errors.js"
import { connectLightRedis, type LightRedisShape } from "../../src/redis/lightRedis.js"
import type { RedisOptions } from "../../src/redis/options.js"
import { RedisService } from "../../src/redis/RedisService.js"
import { luaScript } from "../../src/redis/scripts.js"
import * as Steps from "../../src/steps/index.js"
import { queueKeys } from "../../src/wire/keys.js"
import { httpEvent } from "../aws-lambda/invoke.js"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"
import { startReplyDropProxy } from "../support/replyDropProxy.js"
import { startRoundTripProxy } from "../support/roundTripProxy.js"

let server: RedisServerHandle
let authServer: RedisServerHandle
let raw: IORedis
const opened: Array<LightRedisShape> = []

beforeAll(async () => {
  ;[server, authServer] = await Promise.all([startRedisServer(), startRedisServer(["--databases", "4"])])
  raw = new IORedis(server.url)
  // The password is set once the server answers (the start helper waits for an unauthenticated PING).
  const admin = new IORedis(authServer.url)
  await admin.call("ACL", "SETUSER", "app", "on", ">app pw", "~*", "+@all")
  await admin.config("SET", "requirepass", "rootpw")
  admin.disconnect()
})
beforeEach(async () => {
  await raw.flushall()
})
afterAll(async () => {
  for (const r of opened) await r.quit()
  raw.disconnect()
  await Promise.all([server?.stop(), authServer?.stop()])
})

const light = async (o: RedisOptions): Promise<LightRedisShape> => {
  const r = await Effect.runPromise(connectLightRedis(o))
  opened.push(r)
  return r
}
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e as Effect.Effect<A, unknown>)
const failure = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.flip(e as Effect.Effect<A, E>)) as Promise<E>

describe("light Redis transport", () => {
  it("runs scripts (first as EVAL, then EVALSHA) and plain commands; bytes go in and come back unchanged", async () => {
    const proxy = await startRoundTripProxy({ host: "127.0.0.1", port: server.port })
    try {
      const r = await light({ url: proxy.url })
      expect(await run(r.script("registerQueue", ["t:queues"], ["a"]))).toBe(1)
      expect(await run(r.script("registerQueue", ["t:queues"], ["a"]))).toBe(0)
      expect(await run(r.command("smembers", ["SMEMBERS", "t:queues"]))).toEqual(["a"])
      expect(proxy.roundTrips().map((t) => t.commands)).toEqual([["HELLO"], ["EVAL"], ["EVALSHA"], ["SMEMBERS"]])

      // A binary payload through the real enqueue step, read back as bytes by a script with buffers.
      const payload = Uint8Array.from([0, 255, 1, 0x80, 0xc3, 0x28, 10, 13])
      const layer = Broker.layer.pipe(Layer.provideMerge(Layer.succeed(RedisService, r)))
      const info = await run(Steps.enqueue("bytes", payload, { queue: "light" }).pipe(Effect.provide(layer)))
      const stored = await raw.hgetBuffer(queueKeys("light").task(info.id), "msg")
      const row = await run(runScript(getTaskInfoScript, { queue: "light", id: info.id }).pipe(Effect.provide(layer)))
      expect(row.state).toBe("pending")
      expect(Buffer.from(row.msg!)).toEqual(stored)
      expect(stored!.includes(Buffer.from(payload))).toBe(true)
    } finally {
      await proxy.close()
    }
  })

  it("sends a batch as one pipeline, each call with its own outcome (an error reply fails only its call)", async () => {
    const proxy = await startRoundTripProxy({ host: "127.0.0.1", port: server.port })
    try {
      const r = await light({ url: proxy.url })
      await raw.set("t:string", "x")
      const replies = await run(
        r.scriptBatch([
          { script: "registerQueue", keys: ["t:set"], args: ["a"] },
          { script: "registerQueue", keys: ["t:string"], args: ["b"] },
          { script: "registerQueue", keys: ["t:set"], args: ["c"] }
        ])
      )
      expect(replies.map((x) => (x.ok ? x.value : "failed"))).toEqual([1, "failed", 1])
      const err = (replies[1] as { error: RedisError }).error
      expect(err.message).toContain("WRONGTYPE")
      expect(isErrorReply(err.cause)).toBe(true)
      expect(isLostReply(err)).toBe(false)
      // One round trip after the handshake: the script's first call carries its source, the rest EVALSHA.
      expect(proxy.roundTrips().map((t) => t.commands)).toEqual([["HELLO"], ["EVAL", "EVALSHA", "EVALSHA"]])
      expect((await raw.smembers("t:set")).sort()).toEqual(["a", "c"])
    } finally {
      await proxy.close()
    }
  })

  it("fails a call with a SORT read (it needs a MULTI, which this client does not send) and runs the others", async () => {
    const r = await light({ url: `redis://127.0.0.1:${server.port}` })
    const replies = await run(
      r.scriptBatch([
        { script: "registerQueue", keys: ["t:sorted"], args: ["a"] },
        { script: "registerQueue", keys: ["t:sorted"], args: ["b"], sorted: { list: "t:list", get: "t:*->msg" } }
      ])
    )
    expect(replies[0]).toEqual({ ok: true, value: 1 })
    expect(replies[1]!.ok).toBe(false)
    expect((replies[1] as { error: RedisError }).error.message).toContain("cannot read a script's SORT in a MULTI")
    expect(await raw.smembers("t:sorted")).toEqual(["a"])
  })

  it("recovers from NOSCRIPT after SCRIPT FLUSH: the call (and a batch's calls) are sent again as EVAL", async () => {
    const proxy = await startRoundTripProxy({ host: "127.0.0.1", port: server.port })
    try {
      const r = await light({ url: proxy.url })
      expect(await run(r.script("registerQueue", ["t:q"], ["a"]))).toBe(1)
      await raw.script("FLUSH")
      const before = proxy.roundTrips().length
      expect(await run(r.script("registerQueue", ["t:q"], ["b"]))).toBe(1)
      expect(
        proxy
          .roundTrips()
          .slice(before)
          .map((t) => t.commands)
      ).toEqual([["EVALSHA"], ["EVAL"]])
      await raw.script("FLUSH")
      const replies = await run(
        r.scriptBatch([
          { script: "registerQueue", keys: ["t:q"], args: ["c"] },
          { script: "registerQueue", keys: ["t:q"], args: ["d"] }
        ])
      )
      expect(replies.map((x) => x.ok && x.value)).toEqual([1, 1])
      expect((await raw.smembers("t:q")).sort()).toEqual(["a", "b", "c", "d"])
      expect(await raw.script("EXISTS", luaScript("registerQueue").sha)).toEqual([1])
    } finally {
      await proxy.close()
    }
  })

  it("authenticates (ACL user, or the default user's password) and selects the URL's database; refusals are RedisConnectionErrors", async () => {
    const base = `127.0.0.1:${authServer.port}`
    const app = await light({ url: `redis://app:app%20pw@${base}/2` })
    await run(app.command("set", ["SET", "light:k", "in db 2"]))
    const admin = new IORedis(`redis://:rootpw@${base}/2`)
    try {
      expect(await admin.get("light:k")).toBe("in db 2")
      const root = await light({ url: `redis://${base}`, password: "rootpw", db: 3 })
      expect(await run(root.command("get", ["GET", "light:k"]))).toBeNull()
      expect(await run(root.command("client info", ["CLIENT", "INFO"]))).toMatch(/ db=3 /)

      const wrong = await failure(connectLightRedis({ url: `redis://app:nope@${base}` }))
      expect(wrong._tag).toBe("RedisConnectionError")
      expect(wrong.message).toContain("WRONGPASS")
      expect(wrong.message).not.toContain("nope")
      const none = await failure(
        connectLightRedis({ url: `redis://${base}`, connectTimeoutMs: 2000 }).pipe(
          Effect.flatMap((r) =>
            Effect.as(
              Effect.promise(() => r.quit()),
              r
            )
          )
        )
      )
      expect(none._tag).toBe("RedisConnectionError")
      expect((none as RedisConnectionError).message).toMatch(/NOAUTH|auth/i)
      const db = await failure(connectLightRedis({ url: `redis://:rootpw@${base}/9` }))
      expect(db.message).toContain("refused database 9")
      const cluster = await failure(connectLightRedis({ cluster: [{ host: "127.0.0.1", port: 7000 }] }))
      expect(cluster.message).toContain("Redis Cluster needs ioredis")
    } finally {
      admin.disconnect()
    }
  })

  it("a command without a reply within commandTimeoutMs fails with 'Command timed out: <op> got no reply from <server> within <ms>' (a lost reply); its late reply is dropped, later calls get their own", async () => {
    const r = await light({ url: server.url, commandTimeoutMs: 300 })
    expect(await run(r.command("echo", ["ECHO", "warm"]))).toBe("warm")
    await raw.call("CLIENT", "PAUSE", "1500", "ALL")
    const err = await failure(r.script("registerQueue", ["t:paused"], ["a"]))
    expect(err.message).toBe(
      `Command timed out: script registerQueue got no reply from ${server.url} within 300 ms (commandTimeoutMs); it may still run on the server`
    )
    expect(isLostReply(err)).toBe(true)
    await raw.call("CLIENT", "UNPAUSE") // answered once the pause is over
    // The timed-out call ran once the pause ended; its reply (1) must not answer the next call.
    expect(await run(r.command("echo", ["ECHO", "after"]))).toBe("after")
    expect(await run(r.script("registerQueue", ["t:paused"], ["a"]))).toBe(0)
  })

  it("commands waiting under one shared timer each fail at their own deadline, oldest first; late replies are dropped", async () => {
    const r = await light({ url: server.url, commandTimeoutMs: 400 })
    expect(await run(r.command("echo", ["ECHO", "warm"]))).toBe("warm")
    await raw.call("CLIENT", "PAUSE", "1200", "ALL")
    const settled: Array<string> = []
    const first = failure(r.command("echo", ["ECHO", "first"])).then((e) => (settled.push("first"), e))
    await new Promise((resolve) => setTimeout(resolve, 200))
    const second = failure(r.command("echo", ["ECHO", "second"])).then((e) => (settled.push("second"), e))
    expect((await first).message).toMatch(/^Command timed out: echo got no reply from .* within 400 ms/)
    // The second was sent later: still waiting when the first gave up (the timer was set again for it).
    expect(settled).toEqual(["first"])
    expect((await second).message).toMatch(/^Command timed out: echo got no reply from .* within 400 ms/)
    expect(settled).toEqual(["first", "second"])
    await raw.call("CLIENT", "UNPAUSE")
    expect(await run(r.command("echo", ["ECHO", "after"]))).toBe("after")
  })

  it("reads replies however TCP splits them (one byte per read): nested arrays, negative integers, nulls, empty strings, errors", async () => {
    // A proxy that forwards Redis's replies one byte at a time, each in its own write.
    const upstream = new Set<net.Socket>()
    const proxy = net.createServer((client) => {
      const redis = net.connect(server.port, "127.0.0.1")
      upstream.add(redis)
      client.setNoDelay(true)
      let chain = Promise.resolve()
      redis.on("data", (chunk: Buffer) => {
        for (const byte of chunk)
          chain = chain.then(
            () => new Promise<void>((resolve) => client.write(Buffer.of(byte), () => setImmediate(resolve)))
          )
      })
      client.on("data", (chunk) => redis.write(chunk))
      client.on("close", () => redis.destroy())
      redis.on("close", () => client.destroy())
    })
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
    try {
      const r = await light({ url: `redis://127.0.0.1:${(proxy.address() as net.AddressInfo).port}` })
      const script = "return {1, -2, 'three', '', {4, {'five', false}}, redis.error_reply('ERR six'), -1234567}"
      const viaLight = (await run(r.command("eval", ["EVAL", script, 0]))) as Array<unknown>
      const viaIoredis = (await raw.call("EVAL", script, "0")) as Array<unknown>
      const plain = (v: unknown): unknown =>
        Array.isArray(v) ? v.map(plain) : v instanceof Error ? `error: ${v.message}` : v
      expect(plain(viaLight)).toEqual(plain(viaIoredis))
      expect(plain(viaLight)).toEqual([1, -2, "three", "", [4, ["five", null]], "error: ERR six", -1234567])
      expect(await run(r.command("get", ["GET", "no-such-key"]))).toBe(null)
      expect(await run(r.command("incrby", ["INCRBY", "counter", "-42"]))).toBe(-42)
      const text = "ü".repeat(200) // a 400-byte bulk string, split in the middle of its characters too
      await raw.set("text", text)
      expect(await run(r.command("get", ["GET", "text"]))).toBe(text)
      expect(await run(r.command("echo", ["ECHO", "last"]))).toBe("last")
    } finally {
      for (const s of upstream) s.destroy()
      await new Promise((resolve) => proxy.close(resolve))
    }
  })

  it("a dropped connection fails the call in flight with a RedisError (a lost reply); the next call connects again", async () => {
    const proxy = await startReplyDropProxy({ host: "127.0.0.1", port: server.port })
    try {
      const r = await light({ url: `redis://127.0.0.1:${proxy.port}` })
      const firstId = await run(r.command("client id", ["CLIENT", "ID"]))
      const dropped = proxy.dropReplyOf((argv) => argv[0]?.toUpperCase() === "ECHO")
      const err = await failure(r.command("echo", ["ECHO", "lost"]))
      await dropped
      expect(err._tag).toBe("RedisError")
      expect(isLostReply(err)).toBe(true)
      expect(await run(r.command("echo", ["ECHO", "back"]))).toBe("back")
      expect(await run(r.command("client id", ["CLIENT", "ID"]))).not.toBe(firstId)
      expect(r.connectionState()).toEqual({ down: false, outages: 1 })
    } finally {
      await proxy.close()
    }
  })

  it("the enqueue handler over it: an enqueue whose reply was lost is sent again as the same write (one task, 200)", async () => {
    const proxy = await startReplyDropProxy({ host: "127.0.0.1", port: server.port })
    const secret = "light-secret"
    const handler = createEnqueueHandler({
      auth: { kind: "shared-secret", secret },
      redis: { url: `redis://127.0.0.1:${proxy.port}` }
    })
    try {
      const enqueue = luaScript("enqueue")
      const dropped = proxy.dropReplyOf(
        (argv) =>
          (argv[0]?.toUpperCase() === "EVAL" && argv[1] === enqueue.source) ||
          (argv[0]?.toUpperCase() === "EVALSHA" && argv[1] === enqueue.sha)
      )
      const res = await handler(
        httpEvent(JSON.stringify({ type: "lost", payload: { n: 1 }, options: { queue: "lightlost" } }), {
          "x-asynq-secret": secret
        })
      )
      await dropped
      expect(res.statusCode).toBe(200)
      expect(proxy.dropped()).toBe(1)
      const id = JSON.parse(res.body).id as string
      expect(await raw.lrange(queueKeys("lightlost").pending, 0, -1)).toEqual([id])
    } finally {
      await handler.runtime.dispose()
      await proxy.close()
    }
  })
})
