/**
 * effect-asynq/workflow's guarantees that the in-memory engine cannot show: no lost wake, wakes
 * coalescing into one run, state surviving the worker, runs as ordinary asynq tasks, first write
 * wins for activity exits, leftover run tasks doing nothing.
 */
import { Effect, Layer, ManagedRuntime, Option, References, Schedule, Schema } from "effect"
import { Activity, DurableClock, DurableDeferred, Workflow, WorkflowEngine } from "effect/workflow"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runScript } from "../../src/broker/script.js"
import { workflowActivityDoneScript } from "../../src/broker/workflowActivityDone.js"
import { workflowRunEndScript } from "../../src/broker/workflowRunEnd.js"
import { workflowRunStartScript } from "../../src/broker/workflowRunStart.js"
import { workflowStartScript } from "../../src/broker/workflowStart.js"
import { allQueues, queueKeys } from "../../src/wire/keys.js"
import { workflowExecutionKey } from "../../src/wire/workflowKeys.js"
import {
  controlQueueOf,
  createDeferredClient,
  layer,
  workflowClockTaskType,
  workflowDeferredTaskType
} from "../../src/workflow/index.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { testBrokerLayer } from "../support/arrange.js"
import { Broker } from "../../src/broker/Broker.js"
import { Redis } from "../../src/redis/Redis.js"
import { runBroker } from "../processor/support.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { engineLayer, makeRuntime, normalize, runProgram } from "./support.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

const none = Layer.empty as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>

/** Waits (bounded: 10 s) until the execution has a result. */
const untilPolled = <A, E, R>(poll: Effect.Effect<Option.Option<Workflow.Result<A, E>>, never, R>) =>
  poll.pipe(
    Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: Option.isSome }),
    Effect.timeout("10 seconds")
  )

describe("no lost wake", () => {
  const LostWake = Workflow.make("Wf.LostWake", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  })
  const Go = DurableDeferred.make("go", { success: Schema.String })

  it("a deferred completed after the run read it, while the run is still writing its suspension, leads to another run", async () => {
    const prefix = "lostwake"
    const executionId = await Effect.runPromise(LostWake.executionId({ id: "w" }))
    const key = workflowExecutionKey(
      controlQueueOf({ queue: prefix, shards: 1 }, "Wf.LostWake", executionId),
      executionId
    )
    let stateAtWake: string | null = "not reached"
    let woken = false
    const registrations = LostWake.toLayer(() =>
      Effect.gen(function* () {
        const token = yield* DurableDeferred.token(Go)
        // The race, forced: the run has read the deferred (absent) and is suspending; before it
        // writes its suspension, the deferred is completed (as another process would).
        return yield* DurableDeferred.await(Go).pipe(
          Effect.ensuring(
            Effect.suspend(() => {
              if (woken) return Effect.void
              woken = true
              return Effect.promise(() => c.hget(key, "state")).pipe(
                Effect.tap((s) => Effect.sync(() => (stateAtWake = s))),
                Effect.andThen(DurableDeferred.succeed(Go, { token, value: "in time" }))
              )
            })
          )
        )
      })
    )
    const exit = await runProgram(
      engineLayer("redis", prefix),
      registrations,
      LostWake.execute({ id: "w" }).pipe(Effect.timeout("8 seconds"))
    )
    // The completion landed while the run was going (state "running"), and still the execution went on.
    expect(stateAtWake).toBe("running")
    expect(normalize(exit)).toEqual({ success: "in time" })
    expect(await c.hmget(key, "state", "runs", "wake", "task")).toEqual(["complete", "2", null, null])
  })
})

describe("wakes coalesce", () => {
  const Many = Workflow.make("Wf.Many", {
    payload: { id: Schema.String },
    success: Schema.Number,
    idempotencyKey: ({ id }) => id
  })
  const deferreds = Array.from({ length: 10 }, (_, i) => DurableDeferred.make(`d${i}`, { success: Schema.Number }))
  let prepared = 0
  const registrations = Many.toLayer(() =>
    Effect.gen(function* () {
      yield* Activity.make({ name: "prepare", execute: Effect.sync(() => void prepared++) })
      const xs = yield* Effect.forEach(deferreds, (d) => DurableDeferred.await(d))
      return xs.reduce((a, b) => a + b, 0)
    })
  )
  const prefix = "coalesce"
  const queue = (id: string) =>
    Effect.map(Many.executionId({ id }), (executionId) => ({
      executionId,
      queue: controlQueueOf({ queue: prefix, shards: 1 }, "Wf.Many", executionId)
    }))
  const completeAll = (id: string) =>
    Effect.forEach(
      deferreds,
      (d, i) =>
        Effect.flatMap(DurableDeferred.tokenFromPayload(d, { workflow: Many, payload: { id } }), (token) =>
          DurableDeferred.succeed(d, { token, value: i })
        ),
      { discard: true }
    )

  it("ten completions while the first run is pending: still one run task, and one run completes the execution", async () => {
    const { executionId, queue: q } = await Effect.runPromise(queue("pending"))
    // A process that registers no workflow starts and signals; nothing runs there.
    const client = makeRuntime(engineLayer("redis", prefix), none)
    try {
      await client.runPromise(Many.execute({ id: "pending" }, { discard: true }))
      await client.runPromise(completeAll("pending"))
      expect(await c.llen(queueKeys(q).pending)).toBe(1)
      expect(await c.hget(workflowExecutionKey(q, executionId), "state")).toBe("pending")
    } finally {
      await client.dispose()
    }
    const exit = await runProgram(engineLayer("redis", prefix), registrations, Many.execute({ id: "pending" }))
    expect(normalize(exit)).toEqual({ success: 45 })
    expect(await c.hget(workflowExecutionKey(q, executionId), "runs")).toBe("1")
  })

  it("ten completions while suspended with no worker up: one run enqueued; a new worker finishes without running the stored activity again", async () => {
    const { executionId, queue: q } = await Effect.runPromise(queue("suspended"))
    prepared = 0
    // A first worker runs the execution until it suspends on d0, then goes away.
    const first = await runProgram(
      engineLayer("redis", prefix),
      registrations,
      Effect.flatMap(Many.execute({ id: "suspended" }, { discard: true }), (id) => untilPolled(Many.poll(id)))
    )
    expect(normalize(first)).toMatchObject({ success: { _tag: "Some", value: { _tag: "Suspended" } } })
    expect(prepared).toBe(1)
    const client = makeRuntime(engineLayer("redis", prefix), none)
    try {
      await client.runPromise(completeAll("suspended"))
    } finally {
      await client.dispose()
    }
    expect(await c.llen(queueKeys(q).pending)).toBe(1)
    // A new worker (as after a restart) replays: the activity's stored exit is read, not run again.
    const exit = await runProgram(engineLayer("redis", prefix), registrations, Many.execute({ id: "suspended" }))
    expect(normalize(exit)).toEqual({ success: 45 })
    expect(prepared).toBe(1)
    expect(await c.hget(workflowExecutionKey(q, executionId), "runs")).toBe("2")
  })
})

describe("runs are asynq tasks on the control queue", () => {
  const Hello = Workflow.make("Wf.Hello", {
    payload: { name: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ name }) => name
  })

  it("the control queue is listed in asynq:queues and counts each run as a processed task", async () => {
    const prefix = "visible"
    const q = controlQueueOf({ queue: prefix, shards: 1 }, "Wf.Hello", "any")
    const exit = await runProgram(
      engineLayer("redis", prefix),
      Hello.toLayer(({ name }) => Effect.succeed(`hello ${name}`)),
      Hello.execute({ name: "ann" })
    )
    expect(normalize(exit)).toEqual({ success: "hello ann" })
    expect(await c.sismember(allQueues, q)).toBe(1)
    expect(await c.get(queueKeys(q).processedTotal)).toBe("1")
    expect(await c.llen(queueKeys(q).pending)).toBe(0)
    // Kept until deleted, by default.
    const id = await Effect.runPromise(Hello.executionId({ name: "ann" }))
    expect(await c.pttl(workflowExecutionKey(q, id))).toBe(-1)
  })

  it("completedRetentionMs: a complete execution's state expires after it", async () => {
    const prefix = "retained"
    const exit = await runProgram(
      engineLayer("redis", prefix, { completedRetentionMs: 60_000 }),
      Hello.toLayer(({ name }) => Effect.succeed(`hello ${name}`)),
      Hello.execute({ name: "bob" })
    )
    expect(normalize(exit)).toEqual({ success: "hello bob" })
    const id = await Effect.runPromise(Hello.executionId({ name: "bob" }))
    const ttl = await c.pttl(workflowExecutionKey(controlQueueOf({ queue: prefix, shards: 1 }, "Wf.Hello", id), id))
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  it("shards spread executions over control queues, each execution staying on its own", async () => {
    const prefix = "sharded"
    const names = Array.from({ length: 8 }, (_, i) => `n${i}`)
    const exit = await runProgram(
      engineLayer("redis", prefix, { shards: 4 }),
      Hello.toLayer(({ name }) => Effect.succeed(`hello ${name}`)),
      Effect.forEach(names, (name) => Hello.execute({ name }), { concurrency: "unbounded" })
    )
    expect(normalize(exit)).toEqual({ success: names.map((n) => `hello ${n}`) })
    const used = new Set<string>()
    for (const name of names) {
      const id = await Effect.runPromise(Hello.executionId({ name }))
      const q = controlQueueOf({ queue: prefix, shards: 4 }, "Wf.Hello", id)
      used.add(q)
      expect(await c.hget(workflowExecutionKey(q, id), "state")).toBe("complete")
    }
    expect(used.size).toBeGreaterThan(1)
  })
})

describe("SuspendOnFailure", () => {
  const Fragile = Workflow.make("Wf.Fragile", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  }).annotate(Workflow.SuspendOnFailure, true)
  const Nudge = DurableDeferred.make("nudge")

  it("an automatic wake (a deferred) leaves a failed execution parked; resume runs it", async () => {
    const prefix = "fragile"
    let fixed = false
    const exit = await runProgram(
      engineLayer("redis", prefix),
      Fragile.toLayer(() => (fixed ? Effect.succeed("fixed") : Effect.die(new Error("broken")))),
      Effect.gen(function* () {
        const id = yield* Fragile.execute({ id: "f" }, { discard: true })
        const parked = yield* untilPolled(Fragile.poll(id))
        const q = controlQueueOf({ queue: prefix, shards: 1 }, "Wf.Fragile", id)
        const token = yield* DurableDeferred.tokenFromPayload(Nudge, { workflow: Fragile, payload: { id: "f" } })
        yield* DurableDeferred.succeed(Nudge, { token, value: undefined })
        const afterNudge = yield* Effect.promise(() =>
          Promise.all([c.llen(queueKeys(q).pending), c.hget(workflowExecutionKey(q, id), "state")])
        )
        fixed = true
        yield* Fragile.resume(id)
        const result = yield* Fragile.execute({ id: "f" })
        return { parked: Option.map(parked, (r) => (r._tag === "Suspended" ? r.failed : r._tag)), afterNudge, result }
      })
    )
    expect(normalize(exit)).toEqual({
      success: { parked: Option.some(true), afterNudge: [0, "suspended"], result: "fixed" }
    })
  })
})

describe("completing a deferred from outside", () => {
  const Signup = Workflow.make("Wf.Signup", {
    payload: { email: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ email }) => email
  })
  const Verified = DurableDeferred.make("verified", { success: Schema.Struct({ at: Schema.Number }) })

  it("the Promise client completes it by token (no engine in that process): the execution resumes; the first completion wins; a bad token is refused", async () => {
    const prefix = "outside"
    const client = createDeferredClient({ redis: testRedisUrl(), queue: prefix })
    try {
      const exit = await runProgram(
        engineLayer("redis", prefix),
        Signup.toLayer(({ email }) =>
          Effect.map(DurableDeferred.await(Verified), ({ at }) => `${email} verified at ${at}`)
        ),
        Effect.gen(function* () {
          const id = yield* Signup.execute({ email: "a@b.c" }, { discard: true })
          yield* untilPolled(Signup.poll(id))
          const token = yield* DurableDeferred.tokenFromPayload(Verified, {
            workflow: Signup,
            payload: { email: "a@b.c" }
          })
          const first = yield* Effect.promise(() => client.succeed(Verified, token, { at: 1 }))
          const second = yield* Effect.promise(() => client.succeed(Verified, token, { at: 2 }))
          const bad = yield* Effect.promise(() =>
            client.succeed(Verified, "not-a-token", { at: 3 }).then(
              () => "accepted",
              (e: { _tag: string; field: string }) => `${e._tag} ${e.field}`
            )
          )
          const result = yield* Signup.execute({ email: "a@b.c" })
          return { first, second, bad, result }
        })
      )
      expect(normalize(exit)).toEqual({
        success: { first: true, second: false, bad: "InvalidArgument token", result: "a@b.c verified at 1" }
      })
    } finally {
      await client.close()
    }
  })
})

describe("completing a deferred with a control task (what a Go asynq client enqueues)", () => {
  const Payment = Workflow.make("Wf.Payment", {
    payload: { order: Schema.String },
    success: Schema.String,
    error: Schema.String,
    idempotencyKey: ({ order }) => order
  })
  const Paid = DurableDeferred.make("paid", { success: Schema.Struct({ amount: Schema.Number }), error: Schema.String })

  it("an effect-asynq:wf:deferred task with {token, value} or {token, error} on the control queue completes it; a malformed one is archived", async () => {
    const prefix = "control"
    const exit = await runProgram(
      engineLayer("redis", prefix),
      Payment.toLayer(({ order }) =>
        Effect.map(DurableDeferred.await(Paid), ({ amount }) => `${order} paid ${amount}`)
      ),
      Effect.gen(function* () {
        const outcome = (order: string, body: (token: string) => unknown) =>
          Effect.gen(function* () {
            const id = yield* Payment.execute({ order }, { discard: true })
            yield* untilPolled(Payment.poll(id))
            const token = yield* DurableDeferred.tokenFromPayload(Paid, { workflow: Payment, payload: { order } })
            const queue = controlQueueOf({ queue: prefix, shards: 1 }, "Wf.Payment", id)
            // A plain asynq task with a JSON payload: what a Go asynq.Client would enqueue.
            yield* Effect.orDie(
              enqueue(workflowDeferredTaskType, body(token), { queue }).pipe(
                Effect.provide(testBrokerLayer() as Layer.Layer<Broker>)
              )
            )
            return normalize(yield* Effect.exit(Payment.execute({ order })))
          })
        const paid = yield* outcome("o1", (token) => ({ token, value: { amount: 12 } }))
        const declined = yield* outcome("o2", (token) => ({ token, error: "card declined" }))
        return { paid, declined }
      })
    )
    expect(normalize(exit)).toEqual({
      success: { paid: { success: "o1 paid 12" }, declined: { failure: [{ fail: "card declined" }] } }
    })
    // Malformed: archived at once (SkipRetry), nothing recorded.
    const q = controlQueueOf({ queue: prefix, shards: 1 }, "Wf.Payment", "x")
    const worker = makeRuntime(
      engineLayer("redis", prefix),
      Payment.toLayer(() => Effect.succeed("unused"))
    )
    try {
      await worker.runPromise(Effect.void)
      await runBroker(enqueue(workflowDeferredTaskType, { token: "nonsense", value: 1 }, { queue: q }))
      await waitFor(
        "the malformed task archived",
        () => c.zcard(queueKeys(q).archived),
        (n) => n === 1
      )
    } finally {
      await worker.dispose()
    }
  })
})

describe("durable clocks", () => {
  const Nap = Workflow.make("Wf.Nap", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  })

  it("DurableClock.sleep is a scheduled asynq task at now + duration, once per clock name; it wakes the execution when the clock reaches it", async () => {
    const prefix = "clock"
    const startMs = Date.UTC(2030, 0, 1, 0, 0, 0, 250)
    let after = 0
    const registrations = Nap.toLayer(() =>
      Effect.gen(function* () {
        yield* DurableClock.sleep({ name: "nap", duration: "10 minutes" })
        yield* Activity.make({ name: "after", execute: Effect.sync(() => void after++) })
        return "rested"
      })
    )
    // Everything on a TestClock, set before the worker starts: the engine's schedule, the
    // worker's forwarder, the caller's retries.
    const clock = ManagedRuntime.make(TestClock.layer())
    await clock.runPromise(TestClock.setTime(startMs))
    const clockContext = await clock.runPromise(Effect.context<never>())
    const rt = ManagedRuntime.make(
      registrations.pipe(
        Layer.provideMerge(engineLayer("redis", prefix)),
        Layer.provideMerge(Layer.succeedContext(clockContext)),
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
      )
    )
    try {
      const id = await rt.runPromise(Nap.execute({ id: "n" }, { discard: true }))
      const q = controlQueueOf({ queue: prefix, shards: 1 }, "Wf.Nap", id)
      const clockId = `clock:${id}:nap`
      await waitFor(
        "the execution to suspend",
        () => c.hget(workflowExecutionKey(q, id), "state"),
        (s) => s === "suspended"
      )
      // A scheduled task of the control queue, due at now + 10 minutes (asynq's score: whole seconds, rounded up).
      expect(await c.zscore(queueKeys(q).scheduled, clockId)).toBe(String(Math.ceil((startMs + 600_000) / 1000)))
      expect(await c.hget(queueKeys(q).task(clockId), "state")).toBe("scheduled")
      // Scheduling it again (a replay does) writes nothing new.
      await rt.runPromise(
        Effect.flatMap(WorkflowEngine.WorkflowEngine, (e) =>
          e.scheduleClock(Nap, { executionId: id, clock: DurableClock.make({ name: "nap", duration: "10 minutes" }) })
        )
      )
      expect(await c.zcard(queueKeys(q).scheduled)).toBe(1)
      // Not due a second early.
      await rt.runPromise(TestClock.adjust("599 seconds"))
      await new Promise((r) => setTimeout(r, 200))
      expect(await c.hget(workflowExecutionKey(q, id), "state")).toBe("suspended")
      await rt.runPromise(TestClock.adjust("1 second"))
      await waitFor(
        "the execution to complete",
        () => c.hget(workflowExecutionKey(q, id), "state"),
        (s) => s === "complete"
      )
      expect(after).toBe(1)
      expect(Option.map(await rt.runPromise(Nap.poll(id)), (r) => r._tag)).toEqual(Option.some("Complete"))
      // The clock task was an ordinary task of the queue, processed like the runs.
      expect(await c.exists(queueKeys(q).task(clockId))).toBe(0)
      expect(workflowClockTaskType).toBe("effect-asynq:wf:clock")
    } finally {
      await rt.dispose()
      await clock.dispose()
    }
  })
})

describe("interrupting an execution that runs in another process", () => {
  const Job = Workflow.make("Wf.Job", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  })

  const setup = () => {
    const seen: Array<string> = []
    let started!: () => void
    const inFlight = new Promise<void>((resolve) => (started = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const registrations = Job.toLayer(() =>
      Effect.gen(function* () {
        yield* Activity.make({ name: "book", execute: Effect.sync(() => void seen.push("book")) }).pipe(
          Workflow.withCompensation(() => Effect.sync(() => void seen.push("compensate")))
        )
        yield* Activity.make({
          name: "slow",
          execute: Effect.andThen(
            Effect.sync(() => started()),
            Effect.promise(() => released)
          )
        })
        yield* Activity.make({ name: "next", execute: Effect.sync(() => void seen.push("next")) })
        return "done"
      })
    )
    return { seen, inFlight, release, registrations }
  }

  it("interrupt: the running run starts no new activity once its in-flight one ends; compensations run; the result is interrupted", async () => {
    const prefix = "remote-interrupt"
    const { seen, inFlight, release, registrations } = setup()
    const worker = makeRuntime(engineLayer("redis", prefix), registrations)
    const client = makeRuntime(engineLayer("redis", prefix), none)
    try {
      const id = await worker.runPromise(Job.execute({ id: "j1" }, { discard: true }))
      await inFlight
      // From a process that does not run it (told through Redis).
      await client.runPromise(Job.interrupt(id))
      release()
      const result = await client.runPromise(
        untilPolled(Job.poll(id)).pipe(
          Effect.repeat({
            schedule: Schedule.spaced("20 millis"),
            until: (r) => Option.isSome(r) && r.value._tag === "Complete"
          })
        )
      )
      expect(Option.isSome(result) && result.value._tag === "Complete" && normalize(result.value.exit)).toEqual({
        failure: [{ interrupt: true }]
      })
      expect(seen).toEqual(["book", "compensate"])
    } finally {
      release()
      await client.dispose()
      await worker.dispose()
    }
  })

  it("interruptUnsafe: the in-flight activity is cut short at once; compensations run; the result is interrupted", async () => {
    const prefix = "remote-interrupt-unsafe"
    const { seen, inFlight, release, registrations } = setup()
    const worker = makeRuntime(engineLayer("redis", prefix), registrations)
    const client = makeRuntime(engineLayer("redis", prefix), none)
    try {
      const id = await worker.runPromise(Job.execute({ id: "j2" }, { discard: true }))
      await inFlight
      await client.runPromise(Effect.flatMap(WorkflowEngine.WorkflowEngine, (e) => e.interruptUnsafe(Job, id)))
      // Never released: the run must be cut.
      const result = await client.runPromise(
        untilPolled(Job.poll(id)).pipe(
          Effect.repeat({
            schedule: Schedule.spaced("20 millis"),
            until: (r) => Option.isSome(r) && r.value._tag === "Complete"
          })
        )
      )
      expect(Option.isSome(result) && result.value._tag === "Complete" && normalize(result.value.exit)).toEqual({
        failure: [{ interrupt: true }]
      })
      expect(seen).toEqual(["book", "compensate"])
    } finally {
      release()
      await client.dispose()
      await worker.dispose()
    }
  })
})

describe("options", () => {
  it.each([
    [{ shards: 0 }, "shards"],
    [{ concurrency: 1.5 }, "concurrency"],
    [{ queue: "a{b}" }, "queue"],
    [{ completedRetentionMs: -1 }, "completedRetentionMs"]
  ] as const)("a bad option fails the layer's build with an InvalidArgument naming it (%j)", async (options, field) => {
    const built = await Effect.runPromise(
      Effect.flip(
        Layer.build(layer(options).pipe(Layer.provide(testBrokerLayer() as Layer.Layer<Broker>))).pipe(Effect.scoped)
      )
    )
    expect(built).toMatchObject({ _tag: "InvalidArgument", field })
    expect((built as { message: string }).message).toContain(`workflow layer: ${field} must be`)
  })
})

describe("results", () => {
  const Wrong = Workflow.make("Wf.Wrong", {
    payload: { id: Schema.String },
    success: Schema.Number,
    idempotencyKey: ({ id }) => id
  })

  it("a result its schema rejects is recorded as a defect naming the workflow, not retried forever", async () => {
    const exit = await runProgram(
      engineLayer("redis", "wrong"),
      Wrong.toLayer(() => Effect.succeed("not a number" as unknown as number)),
      Wrong.execute({ id: "w" })
    )
    const n = normalize(exit) as { failure: Array<{ die: string }> }
    expect(n.failure).toHaveLength(1)
    expect(n.failure[0]!.die).toContain('the result of workflow "Wf.Wrong" does not fit its schemas')
  })
})

describe("scripts", () => {
  it("workflowActivityDone: the first write wins and every writer gets it back; no hash is created for an unknown execution", async () => {
    const q = "scripts"
    await c.hset(workflowExecutionKey(q, "x1"), "wf", "W", "state", "running")
    const first = await runBroker(
      runScript(workflowActivityDoneScript, { queue: q, executionId: "x1", field: "a:step/1", exit: "first" })
    )
    const second = await runBroker(
      runScript(workflowActivityDoneScript, { queue: q, executionId: "x1", field: "a:step/1", exit: "second" })
    )
    expect([first, second]).toEqual(["first", "first"])
    expect(
      await runBroker(
        runScript(workflowActivityDoneScript, { queue: q, executionId: "nope", field: "a:step/1", exit: "x" })
      )
    ).toBeUndefined()
    expect(await c.exists(workflowExecutionKey(q, "nope"))).toBe(0)
  })

  it("workflowRunStart: a run task that is not the execution's current one does nothing", async () => {
    const q = "scripts"
    await c.hset(workflowExecutionKey(q, "x2"), "wf", "W", "state", "pending", "task", "current", "runs", "0")
    expect(
      await runBroker(runScript(workflowRunStartScript, { queue: q, executionId: "x2", runId: "leftover" }))
    ).toEqual({ _tag: "Stale" })
    expect(await c.hmget(workflowExecutionKey(q, "x2"), "state", "runs")).toEqual(["pending", "0"])
    const go = await runBroker(runScript(workflowRunStartScript, { queue: q, executionId: "x2", runId: "current" }))
    expect(go._tag).toBe("Run")
    expect(await c.hmget(workflowExecutionKey(q, "x2"), "state", "runs")).toEqual(["running", "1"])
  })

  it("workflowStart: an execution id of another workflow is refused with InvalidState, nothing written", async () => {
    const q = "scripts"
    await c.hset(workflowExecutionKey(q, "x3"), "wf", "Other", "state", "complete")
    const start = {
      queue: q,
      executionId: "x3",
      workflow: "Mine",
      payload: "{}",
      parent: "",
      runId: "r1",
      runMessage: "m",
      pendingSince: "0"
    }
    const error = await runBroker(Effect.flip(runScript(workflowStartScript, start)))
    expect(error).toMatchObject({
      _tag: "InvalidState",
      message: 'cannot start workflow "Mine" as execution "x3": that execution id belongs to workflow "Other"'
    })
    expect(await c.llen(queueKeys(q).pending)).toBe(0)
  })

  it("workflowRunEnd: a run suspending by SuspendOnFailure is run again only for an explicit wake that came meanwhile", async () => {
    const q = "scripts"
    const end = (executionId: string) =>
      runBroker(
        runScript(workflowRunEndScript, {
          queue: q,
          executionId,
          endingRunId: "r1",
          outcome: "suspended",
          result: "{}",
          failed: true,
          retentionMs: 0,
          runId: `next-${executionId}`,
          runMessage: "m",
          pendingSince: "0"
        })
      )
    await c.hset(workflowExecutionKey(q, "x4"), "wf", "W", "state", "running", "task", "r1", "wake", "a")
    expect(await end("x4")).toBe("recorded")
    expect(await c.hmget(workflowExecutionKey(q, "x4"), "state", "failed", "task", "wake")).toEqual([
      "suspended",
      "1",
      null,
      null
    ])
    await c.hset(workflowExecutionKey(q, "x5"), "wf", "W", "state", "running", "task", "r1", "wake", "e")
    expect(await end("x5")).toBe("next-run-enqueued")
    expect(await c.hmget(workflowExecutionKey(q, "x5"), "state", "failed", "task", "wake")).toEqual([
      "pending",
      null,
      "next-x5",
      null
    ])
    expect(await c.lrange(queueKeys(q).pending, 0, -1)).toEqual(["next-x5"])
    // A leftover run ends nothing.
    expect(await end("x5")).toBe("stale")
  })
})

describe("broker calls", () => {
  const Retried = Workflow.make("Wf.Retried", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  })

  it("a script call refused by Redis is tried again, and the execution goes on once Redis takes it", async () => {
    // The engine connects as its own ACL user, which loses access to execution hashes (a script
    // call naming one is refused: NOPERM, a RedisError) until the first refusal is in the ACL
    // log; access then comes back, within the engine's retries of that call.
    const user = "wfretry"
    await c.call("ACL", "SETUSER", user, "reset", "on", ">pw", "~*", "&*", "+@all")
    const url = new URL(testRedisUrl())
    url.username = user
    url.password = "pw"
    const engine = layer({ queue: "retried", server: { shutdownTimeoutMs: 500 } }).pipe(
      Layer.provide(Broker.layer),
      Layer.provide(Redis.layer({ url: url.toString() }))
    ) as Layer.Layer<WorkflowEngine.WorkflowEngine>
    let ran = 0
    const rt = makeRuntime(
      engine,
      Retried.toLayer(({ id }) =>
        Activity.make({ name: "once", success: Schema.String, execute: Effect.sync(() => `${id}:${++ran}`) })
      )
    )
    try {
      await rt.runPromise(Effect.void)
      await c.call("ACL", "LOG", "RESET")
      // Every key but the queue's `wf:…` ones (no other key of a queue starts with "w").
      await c.call(
        "ACL",
        "SETUSER",
        user,
        "resetkeys",
        "~asynq:queues",
        "~asynq:servers*",
        "~asynq:workers*",
        "~asynq:{retried:Wf.Retried}:[^w]*"
      )
      let refused = false
      const allowAgain = (async () => {
        for (let i = 0; i < 1000 && !refused; i++) {
          const log = (await c.call("ACL", "LOG")) as Array<Array<unknown>>
          refused = log.some((entry) => entry.some((v, j) => entry[j - 1] === "object" && String(v).includes(":wf:x:")))
          if (!refused) await new Promise((r) => setTimeout(r, 5))
        }
        await c.call("ACL", "SETUSER", user, "~*")
      })()
      const exit = await rt.runPromise(Effect.exit(Effect.timeout(Retried.execute({ id: "r" }), "15 seconds")))
      await allowAgain
      expect(refused).toBe(true)
      expect(normalize(exit)).toEqual({ success: "r:1" })
      expect(ran).toBe(1)
    } finally {
      await rt.dispose()
      await c.call("ACL", "DELUSER", user)
    }
  })
})
