/** The fetch that rides along with completions: one round trip acknowledges finished tasks and leases the next ones. */
import { Effect, Exit, Layer, References, Scope } from "effect"
import { type Redis as IORedis, Redis as IORedisClient } from "ioredis"
import { afterAll, beforeAll, expect, it } from "vitest"
import { Broker } from "../../src/broker/Broker.js"
import { leasingListKey } from "../../src/broker/leaseByIds.js"
import * as Server from "../../src/processor/Server.js"
import { enqueue, enqueueMany } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { brokerLayerAt, testBrokerLayer } from "../support/arrange.js"
import { startRedisServer } from "../support/redis-server.js"
import { luaScript } from "../../src/redis/scripts.js"
import { flushTestDb, rawClient } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

it("at full concurrency the next tasks are leased in the round trip that completes the finished ones; concurrency holds", async () => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const context = await Effect.runPromise(
      Layer.buildWithScope(testBrokerLayer() as Layer.Layer<Broker, never>, scope)
    )
    const broker = context.mapUnsafe.get(Broker.key) as Broker["Service"]
    // Every batch that reaches Redis, as the list of its scripts.
    const batches: Array<Array<string>> = []
    const counting = Broker.of({
      ...broker,
      redis: {
        ...broker.redis,
        scriptBatch: (calls, opts) =>
          Effect.suspend(() => (batches.push(calls.map((x) => x.script)), broker.redis.scriptBatch(calls, opts)))
      }
    })
    const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
      Effect.runPromise(
        eff.pipe(Effect.provideService(Broker, counting), Effect.provideService(References.MinimumLogLevel, "Error"))
      )
    const n = 30
    for (let i = 0; i < n; i++) await run(enqueue("ride", i, { queue: "ride" }))
    let running = 0
    let most = 0
    const done: Array<number> = []
    await run(
      Server.start(
        {
          ride: async (task) => {
            most = Math.max(most, ++running)
            await new Promise((r) => setTimeout(r, 2))
            running--
            done.push(task.json<number>())
          }
        },
        { concurrency: 2, queues: { ride: 1 } }
      ).pipe(Scope.provide(scope))
    )
    await waitFor(
      "all processed",
      () => c.get(queueKeys("ride").processedTotal),
      (total) => total === String(n)
    )
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i))
    expect(most).toBeLessThanOrEqual(2)
    // A ride: the lease of the next tasks goes in the round trip of the completions — in the same
    // script call when it is the queue being completed (completeAndLease), else as a call after them.
    const rides = batches.filter((b) => b.includes("dequeueLease") || b.includes("completeAndLease"))
    expect(rides.length).toBeGreaterThan(0)
    for (const b of rides) {
      const completions = b[b.length - 1] === "dequeueLease" ? b.slice(0, -1) : b
      expect(completions.length).toBeGreaterThan(0)
      expect(completions.every((s) => s === "complete" || s === "completeBatch" || s === "completeAndLease")).toBe(true)
    }
    expect(await c.llen(queueKeys("ride").active)).toBe(0)
    expect(await c.llen(queueKeys("ride").pending)).toBe(0)
  } finally {
    await Effect.runPromise(
      Scope.close(scope, Exit.void).pipe(Effect.provideService(References.MinimumLogLevel, "Error"))
    )
  }
})

it("concurrency holds when the runtime switches fibers at every step (a ride's slots stay taken until the tasks it leased are registered)", async () => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const context = await Effect.runPromise(
      Layer.buildWithScope(testBrokerLayer() as Layer.Layer<Broker, never>, scope)
    )
    // Yield to the scheduler every third operation (the fewest the runtime can make progress with): any window in the fetch loop's slot accounting
    // between two steps (a ride's reply landing, the tasks it leased being registered) is open to
    // the other fibers, as it is now and then under load with the default budget.
    const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
      Effect.runPromise(
        eff.pipe(
          Effect.provideContext(context),
          Effect.provideService(References.MinimumLogLevel, "Error"),
          Effect.provideService(References.MaxOpsBeforeYield, 3)
        )
      )
    const n = 400
    const concurrency = 8
    for (let i = 0; i < n; i += 100)
      await run(
        enqueueMany(
          Array.from({ length: 100 }, (_, j) => ({ type: "tight", payload: i + j, options: { queue: "tight" } }))
        )
      )
    let running = 0
    let most = 0
    let mostActive = 0
    let handled = 0
    await run(
      Server.start(
        {
          tight: async () => {
            most = Math.max(most, ++running)
            // Some tasks end at once, some after a timer: completions land at different moments.
            if (handled++ % 3 === 0) await new Promise((r) => setTimeout(r, 1))
            running--
          }
        },
        { concurrency, queues: { tight: 1 } }
      ).pipe(Scope.provide(scope))
    )
    await waitFor(
      "all processed",
      async () => {
        mostActive = Math.max(mostActive, await c.llen(queueKeys("tight").active))
        return c.get(queueKeys("tight").processedTotal)
      },
      (total) => total === String(n),
      { timeoutMs: 20_000 }
    )
    expect(most).toBeLessThanOrEqual(concurrency)
    expect(mostActive).toBeLessThanOrEqual(concurrency)
    expect(await c.llen(queueKeys("tight").active)).toBe(0)
  } finally {
    await Effect.runPromise(
      Scope.close(scope, Exit.void).pipe(Effect.provideService(References.MinimumLogLevel, "Error"))
    )
  }
}, 60_000)

it("Redis never holds more leases than the concurrency, in the order it runs the batches (two acknowledgement batches in flight, rides counting both)", async () => {
  // Two acknowledgement batches may be in flight, and a ride counts the tasks the other batch in
  // flight completes as freed: that holds only when Redis runs that batch first. Every handler
  // waits on a timer, so completions come in bursts and both batches go out together. Seen by
  // MONITOR, in the order Redis ran them: every lease (dequeueLease, completeAndLease) and every
  // completion. (Before the batcher waited for one batch to be handed to the connection before
  // sending the next, the ride's batch could reach Redis first: 15 leases held at concurrency 10.)
  // On a redis-server of its own: MONITOR sees every client of a server, and the other files' traffic
  // on the shared one is not this test's to read.
  const own = await startRedisServer()
  const ownClient = new IORedisClient(own.url, { maxRetriesPerRequest: 1 })
  const scope = await Effect.runPromise(Scope.make())
  const monitor = await ownClient.monitor()
  try {
    const context = await Effect.runPromise(
      Layer.buildWithScope(brokerLayerAt({ url: own.url }) as Layer.Layer<Broker, never>, scope)
    )
    const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
      Effect.runPromise(
        eff.pipe(Effect.provideContext(context), Effect.provideService(References.MinimumLogLevel, "Error"))
      )
    const n = 1000
    const concurrency = 10
    for (let i = 0; i < n; i += 100)
      await run(
        enqueueMany(
          Array.from({ length: 100 }, (_, j) => ({ type: "order", payload: i + j, options: { queue: "order" } }))
        )
      )
    // A script goes as EVALSHA, or as EVAL with its source (a first call on a connection; its
    // first line names it).
    const scripts = ["dequeueLease", "completeAndLease", "complete", "completeBatch"] as const
    const byName = new Map<string, string>(scripts.map((name) => [luaScript(name).sha, name]))
    let pending = n
    let active = 0
    let most = 0
    monitor.on("monitor", (_time: string, args: Array<string>, source: string, database: string) => {
      const command = args[0]?.toLowerCase()
      if (Number(database) !== 0 || source === "lua" || (command !== "evalsha" && command !== "eval")) return
      const name = command === "eval" ? /^-- (\w+):/.exec(args[1]!)?.[1] : byName.get(args[1]!)
      if (name === undefined || !(scripts as ReadonlyArray<string>).includes(name)) return
      const argv = args.slice(3 + Number(args[2]))
      const lease = (count: string) => {
        const took = Math.min(Number(count), pending)
        pending -= took
        active += took
      }
      if (name === "dequeueLease") lease(argv[1]!)
      else if (name === "complete") active -= 1
      else if (name === "completeBatch") active -= (argv.length - 1) / 5
      else {
        // completeAndLease: stat expiry, lease score, count, now, then five entries per task.
        active -= (argv.length - 4) / 5
        lease(argv[2]!)
      }
      most = Math.max(most, active)
    })
    await run(
      Server.start(
        {
          order: async () => {
            await new Promise((r) => setTimeout(r, 1))
          }
        },
        { concurrency, queues: { order: 1 } }
      ).pipe(Scope.provide(scope))
    )
    await waitFor(
      "all processed",
      () => ownClient.get(queueKeys("order").processedTotal),
      (total) => total === String(n),
      { timeoutMs: 30_000 }
    )
    await waitFor(
      "every batch seen",
      () => active,
      (a) => a === 0
    )
    expect(pending).toBe(0)
    expect(most).toBeLessThanOrEqual(concurrency)
  } finally {
    monitor.disconnect()
    await Effect.runPromise(
      Scope.close(scope, Exit.void).pipe(Effect.provideService(References.MinimumLogLevel, "Error"))
    )
    ownClient.disconnect()
    await own.stop()
  }
}, 60_000)

it("a queue of large messages rides too: the lease and a SORT of its messages in a MULTI after the completions; each task runs once, whole; concurrency holds", async () => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const context = await Effect.runPromise(
      Layer.buildWithScope(testBrokerLayer() as Layer.Layer<Broker, never>, scope)
    )
    const broker = context.mapUnsafe.get(Broker.key) as Broker["Service"]
    // Every batch that reaches Redis, as its scripts (`+sort`: a call with a SORT read).
    const batches: Array<Array<string>> = []
    const counting = Broker.of({
      ...broker,
      redis: {
        ...broker.redis,
        scriptBatch: (calls, opts) =>
          Effect.suspend(
            () => (
              batches.push(calls.map((x) => (x.sorted ? `${x.script}+sort` : x.script))),
              broker.redis.scriptBatch(calls, opts)
            )
          )
      }
    })
    const run = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
      Effect.runPromise(
        eff.pipe(Effect.provideService(Broker, counting), Effect.provideService(References.MinimumLogLevel, "Error"))
      )
    const n = 40
    const big = "x".repeat(100 * 1024)
    await run(
      enqueueMany(
        Array.from({ length: n }, (_, i) => ({ type: "big", payload: { i, big }, options: { queue: "big" } }))
      )
    )
    let running = 0
    let most = 0
    const done: Array<number> = []
    await run(
      Server.start(
        {
          big: async (task) => {
            most = Math.max(most, ++running)
            await new Promise((r) => setTimeout(r, 2))
            running--
            const p = task.json<{ i: number; big: string }>()
            expect(p.big).toBe(big)
            done.push(p.i)
          }
        },
        { concurrency: 4, queues: { big: 1 } }
      ).pipe(Scope.provide(scope))
    )
    await waitFor(
      "all processed",
      () => c.get(queueKeys("big").processedTotal),
      (total) => total === String(n)
    )
    expect(done.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i))
    expect(most).toBeLessThanOrEqual(4)
    // Once the first lease has learnt the size: rides as a MULTI with SORT, after the batch's
    // completions, never merged into a completion's call (which would copy the messages through Lua).
    const sortedRides = batches.filter((b) => b.includes("dequeueLease+sort"))
    expect(sortedRides.length).toBeGreaterThan(0)
    for (const b of sortedRides) {
      expect(b.length).toBeGreaterThan(1)
      expect(b[b.length - 1]).toBe("dequeueLease+sort")
      expect(b.slice(0, -1).every((x) => x === "complete" || x === "completeBatch")).toBe(true)
    }
    const scriptRides = batches.flat().filter((x) => x === "dequeueLease" || x === "completeAndLease")
    expect(scriptRides.length).toBeLessThanOrEqual(1) // the first ride, before the size was known
    expect(await c.exists(leasingListKey("big"))).toBe(0)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
})
