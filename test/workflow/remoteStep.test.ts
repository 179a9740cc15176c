/**
 * Remote steps: a workflow step that is an ordinary asynq task, served here by a separate process
 * that uses only ioredis and asynq's data model (a stand-in for a Go asynq server: it dequeues,
 * writes the task's `result` as Go's ResultWriter does, and completes with the retention or
 * archives the task as Go's server does). The workflow enqueues the task once, suspends, and a
 * check task on its control queue reads the outcome and wakes it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Layer, Option, Schedule, Schema } from "effect"
import { DurableClock, Workflow, type WorkflowEngine } from "effect/workflow"
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InvalidArgument } from "../../src/broker/errors.js"
import { defineTask } from "../../src/tasks/index.js"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { workflowExecutionKey } from "../../src/wire/workflowKeys.js"
import type { Broker } from "../../src/broker/Broker.js"
import * as Server from "../../src/processor/Server.js"
import type { Task } from "../../src/processor/Task.js"
import { controlQueueOf, RemoteStep } from "../../src/workflow/index.js"
import { testBrokerLayer } from "../support/arrange.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { waitFor } from "../support/waitFor.js"
import { engineLayer, makeRuntime, normalize, runProgram } from "./support.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
let c: IORedis
const children: Array<ChildProcess> = []
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  c.disconnect()
})

/** Starts the stand-in server on a queue; resolves once it is dequeuing. */
const standIn = async (queue: string, mode: "succeed" | "succeed-notify" | "archive") => {
  const child = spawn(process.execPath, ["test/workflow/fixtures/asynqStandIn.mjs"], {
    cwd: root,
    env: { ...process.env, REDIS_URL: testRedisUrl(), QUEUE: queue, MODE: mode },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  await waitFor(
    "the stand-in server to be ready",
    () => out,
    (o) => o.includes("ready")
  )
  return {
    output: () => out,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
    }
  }
}

const Double = defineTask("image:double", Schema.Struct({ n: Schema.Number }))
const DoubledResult = Schema.Struct({ doubled: Schema.Number })

const Calc = Workflow.make("Wf.RemoteCalc", {
  payload: { n: Schema.Number, queue: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ n, queue }) => `${queue}/${n}`
})

const stepOn = (queue: string) =>
  RemoteStep.make({
    name: "double",
    task: Double,
    queue,
    success: DoubledResult,
    // On the "notified" queue the first check is an hour away: only the server's report completes the step.
    poll: queue === "remote-notified" ? { initialMs: 3_600_000, maxMs: 3_600_000 } : { initialMs: 100, maxMs: 400 },
    retentionMs: queue === "remote-notified" ? 3 * 3_600_000 : undefined
  })

/** The options of the slow-polling step, to make it anew on another queue. */
const stepOptionsOf = (step: ReturnType<typeof stepOn>) => ({
  name: step.name,
  task: step.task,
  success: step.successSchema,
  poll: { initialMs: 3_600_000, maxMs: 3_600_000 },
  retentionMs: 3 * 3_600_000
})

/** The remote task's key, once it is enqueued and the execution suspended on it. */
const dispatched = (prefix: string, queue: string, id: string) =>
  Effect.promise(async () => {
    const x = workflowExecutionKey(controlQueueOf({ queue: prefix, shards: 1 }, "Wf.RemoteCalc", id), id)
    await waitFor(
      "the step dispatched and the execution suspended",
      () => c.hmget(x, "r:double/1", "state"),
      ([m, s]) => m !== null && s === "suspended"
    )
    return queueKeys(queue).task(RemoteStep.remoteTaskId(id, "double", 1))
  })

const CalcLive = Calc.toLayer(({ n, queue }) =>
  Effect.gen(function* () {
    const step = stepOn(queue)
    const result = yield* step
      .run({ n })
      .pipe(Effect.catchTag("RemoteStepFailed", (e) => Effect.succeed({ doubled: -1, failure: e })))
    return "failure" in result
      ? `failed (${result.failure.reason}): ${result.failure.message}`
      : `doubled: ${result.doubled}`
  })
)

describe("a remote step served by a process that speaks only asynq's data model", () => {
  it("completes: the handler's result (its `result` field) is the step's value; the task was enqueued once, with a retention", async () => {
    const queue = "remote-ok"
    const server = await standIn(queue, "succeed")
    const prefix = "remote"
    try {
      const exit = await runProgram(
        engineLayer("redis", prefix),
        CalcLive,
        Effect.gen(function* () {
          const a = yield* Calc.execute({ n: 21, queue })
          const b = yield* Calc.execute({ n: 5, queue })
          return [a, b]
        })
      )
      expect(normalize(exit)).toEqual({ success: ["doubled: 42", "doubled: 10"] })
    } finally {
      await server.stop()
    }
    // One task per execution and step, each run by the stand-in once.
    expect(server.output().match(/^done /gm)?.length).toBe(2)
    expect(await c.get(queueKeys(queue).processedTotal)).toBe("2")
    const executionId = await Effect.runPromise(Calc.executionId({ n: 21, queue }))
    const taskId = RemoteStep.remoteTaskId(executionId, "double", 1)
    const [state, result, msg] = await c.hmgetBuffer(queueKeys(queue).task(taskId), "state", "result", "msg")
    expect(state?.toString()).toBe("completed")
    expect(result?.toString()).toBe('{"doubled":42}')
    const decoded = decodeTaskMessage(msg!)
    expect(decoded.retention).toBe(24 * 3600)
    expect(decoded.type).toBe("image:double")
    expect(decoded.headers[RemoteStep.remoteControlQueueHeader]).toBe(
      controlQueueOf({ queue: prefix, shards: 1 }, "Wf.RemoteCalc", executionId)
    )
    // The execution ran more than once (it suspended on the step), yet the step was dispatched once.
    const x = workflowExecutionKey(
      controlQueueOf({ queue: prefix, shards: 1 }, "Wf.RemoteCalc", executionId),
      executionId
    )
    const [runs, marker, outcome] = await c.hmget(x, "runs", "r:double/1", "d:RemoteStep/double/1")
    expect(Number(runs)).toBeGreaterThanOrEqual(2)
    expect(JSON.parse(marker!)).toEqual({ queue, taskId })
    expect(JSON.parse(outcome!)).toEqual({ _tag: "Success", value: { doubled: 42 } })
  })

  it("five remote steps at once (fan-out) and their fan-in: each enqueued once, each result in its place", async () => {
    const queue = "remote-fan"
    const server = await standIn(queue, "succeed")
    const Fan = Workflow.make("Wf.RemoteFan", {
      payload: { id: Schema.String },
      success: Schema.Array(Schema.Number),
      idempotencyKey: ({ id }) => id
    })
    const FanLive = Fan.toLayer(() =>
      Effect.all(
        [1, 2, 3, 4, 5].map((n) =>
          RemoteStep.make({
            name: `double/${n}`,
            task: Double,
            queue,
            success: DoubledResult,
            poll: { initialMs: 100, maxMs: 400 }
          })
            .run({ n })
            .pipe(Effect.map(({ doubled }) => doubled))
        ),
        { concurrency: "unbounded" }
      ).pipe(Effect.orDie)
    )
    try {
      const exit = await runProgram(engineLayer("redis", "remote"), FanLive, Fan.execute({ id: "fan" }))
      expect(normalize(exit)).toEqual({ success: [2, 4, 6, 8, 10] })
    } finally {
      await server.stop()
    }
    expect(server.output().match(/^done /gm)?.length).toBe(5)
  })

  it("every workflow process down while the remote task runs: the check is a task, and a worker started later completes the step", async () => {
    const queue = "remote-down"
    const prefix = "remote-down"
    // A worker dispatches the step, the execution suspends, and the worker goes away.
    const first = await runProgram(
      engineLayer("redis", prefix),
      CalcLive,
      Effect.gen(function* () {
        const id = yield* Calc.execute({ n: 50, queue }, { discard: true })
        yield* dispatched(prefix, queue, id)
        return id
      })
    )
    expect(Exit.isSuccess(first)).toBe(true)
    // Only now does the remote server run, with no workflow process up.
    const server = await standIn(queue, "succeed")
    try {
      await waitFor(
        "the remote task done",
        () => server.output(),
        (o) => o.includes("done ")
      )
    } finally {
      await server.stop()
    }
    const exit = await runProgram(engineLayer("redis", prefix), CalcLive, Calc.execute({ n: 50, queue }))
    expect(normalize(exit)).toEqual({ success: "doubled: 100" })
  })

  it("a server that reports at once (the control task effect-asynq:wf:deferred with the token from the task's headers) completes the step without waiting for a check", async () => {
    const queue = "remote-notified"
    const server = await standIn(queue, "succeed-notify")
    try {
      const exit = await runProgram(engineLayer("redis", "remote"), CalcLive, Calc.execute({ n: 8, queue }))
      expect(normalize(exit)).toEqual({ success: "doubled: 16" })
    } finally {
      await server.stop()
    }
    expect(server.output().match(/^done /gm)?.length).toBe(1)
  })

  it("an effect-asynq handler serving the step with RemoteStep.complete: the result is written and the step completes without waiting for a check", async () => {
    const queue = "remote-notified-effect"
    const step = stepOn("remote-notified")
    const Serve = Layer.effectDiscard(
      Server.start(
        {
          [Double.type]: (task: Task) =>
            Effect.gen(function* () {
              const { n } = task.json<{ n: number }>()
              yield* RemoteStep.complete(step, task, { doubled: 2 * n })
            })
        },
        { queues: { [queue]: 1 }, shutdownTimeoutMs: 500 }
      )
    ).pipe(Layer.provide(testBrokerLayer() as Layer.Layer<Broker>), Layer.orDie) as Layer.Layer<
      never,
      never,
      WorkflowEngine.WorkflowEngine
    >
    const Notified = Calc.toLayer(({ n }) =>
      Effect.map(
        RemoteStep.make({ ...stepOptionsOf(step), queue }).run({ n }),
        ({ doubled }) => `doubled: ${doubled}`
      ).pipe(Effect.orDie)
    )
    const exit = await runProgram(
      engineLayer("redis", "remote-effect"),
      Layer.merge(Notified, Serve),
      Calc.execute({ n: 4, queue })
    )
    expect(normalize(exit)).toEqual({ success: "doubled: 8" })
    const executionId = await Effect.runPromise(Calc.executionId({ n: 4, queue }))
    const taskKey = queueKeys(queue).task(RemoteStep.remoteTaskId(executionId, "double", 1))
    // The worker completes the task with the retention the step gave it, its result kept.
    await waitFor(
      "the task completed",
      () => c.hget(taskKey, "state"),
      (s) => s === "completed"
    )
    expect(await c.hget(taskKey, "result")).toBe('{"doubled":8}')
  })

  it("archived (retries exhausted): the step fails with RemoteStepFailed carrying the task's last error", async () => {
    const queue = "remote-fail"
    const server = await standIn(queue, "archive")
    try {
      const exit = await runProgram(engineLayer("redis", "remote"), CalcLive, Calc.execute({ n: 3, queue }))
      expect(Exit.isSuccess(exit)).toBe(true)
      const text = Exit.isSuccess(exit) ? exit.value : ""
      expect(text).toMatch(
        /^failed \(archived\): remote step "double" \(task "wf:[^"]+:double\/1" on queue "remote-fail"\)/
      )
      expect(text).toContain("the task was archived: label printer offline")
    } finally {
      await server.stop()
    }
    expect(server.output().match(/^done /gm)?.length).toBe(1)
  })

  it("a step whose task is gone (deleted before its outcome was read) fails with reason task-gone", async () => {
    const queue = "remote-gone"
    // No server: the task is deleted while pending, as an operator would.
    const exit = await runProgram(
      engineLayer("redis", "remote"),
      CalcLive,
      Effect.gen(function* () {
        const id = yield* Calc.execute({ n: 7, queue }, { discard: true })
        const taskKey = queueKeys(queue).task(RemoteStep.remoteTaskId(id, "double", 1))
        yield* Effect.promise(() =>
          waitFor(
            "the remote task",
            () => c.exists(taskKey),
            (n) => n === 1
          )
        )
        yield* Effect.promise(() =>
          c
            .multi()
            .del(taskKey)
            .lrem(queueKeys(queue).pending, 0, RemoteStep.remoteTaskId(id, "double", 1))
            .exec()
        )
        return yield* Calc.execute({ n: 7, queue })
      })
    )
    expect(normalize(exit)).toMatchObject({ success: expect.stringMatching(/^failed \(task-gone\): /) })
  })
})

describe("a remote step whose execution completes without its outcome", () => {
  /** Polls `id` until its execution is complete; its exit as plain data. */
  const completed = (id: string) =>
    Calc.poll(id).pipe(
      Effect.repeat({
        schedule: Schedule.spaced("20 millis"),
        until: (r) => Option.isSome(r) && r.value._tag === "Complete"
      }),
      Effect.map((r) => (Option.isSome(r) && r.value._tag === "Complete" ? normalize(r.value.exit) : "not complete"))
    )

  it("interrupted while the task waits (no server has taken it): the task is deleted, never to run", async () => {
    const queue = "remote-stop-pending"
    const prefix = "remote-stop"
    const out = await runProgram(
      engineLayer("redis", prefix),
      CalcLive,
      Effect.gen(function* () {
        const id = yield* Calc.execute({ n: 3, queue }, { discard: true })
        const taskKey = yield* dispatched(prefix, queue, id)
        expect(yield* Effect.promise(() => c.hget(taskKey, "state"))).toBe("pending")
        yield* Calc.interrupt(id)
        return { exit: yield* completed(id), taskKey, taskId: RemoteStep.remoteTaskId(id, "double", 1) }
      })
    )
    expect(Exit.isSuccess(out)).toBe(true)
    const { exit, taskKey, taskId } = (out as Exit.Success<{ exit: unknown; taskKey: string; taskId: string }>).value
    expect(exit).toEqual({ failure: [{ interrupt: true }] })
    await waitFor(
      "the remote task deleted",
      () => c.exists(taskKey),
      (n) => n === 0
    )
    expect(await c.lrange(queueKeys(queue).pending, 0, -1)).not.toContain(taskId)
  })

  it("a race the step lost (a durable clock fired first): the workflow's result stands and the waiting task is deleted", async () => {
    const queue = "remote-stop-race"
    const Raced = Calc.toLayer(({ n, queue }) =>
      Effect.race(
        Effect.map(stepOn(queue).run({ n }), ({ doubled }) => `doubled: ${doubled}`).pipe(Effect.orDie),
        Effect.as(DurableClock.sleep({ name: "give-up", duration: "300 millis" }), "gave up")
      )
    )
    const out = await runProgram(
      engineLayer("redis", "remote-race"),
      Raced,
      Effect.gen(function* () {
        const id = yield* Calc.execute({ n: 5, queue }, { discard: true })
        const result = yield* Calc.execute({ n: 5, queue })
        return { result, taskKey: queueKeys(queue).task(RemoteStep.remoteTaskId(id, "double", 1)) }
      })
    )
    expect(Exit.isSuccess(out)).toBe(true)
    const { result, taskKey } = (out as Exit.Success<{ result: string; taskKey: string }>).value
    expect(result).toBe("gave up")
    await waitFor(
      "the remote task deleted",
      () => c.exists(taskKey),
      (n) => n === 0
    )
  })

  it("interrupted while a server runs the task: that attempt finishes, and when it fails its retry is deleted instead of run again", async () => {
    const queue = "remote-stop-active"
    const prefix = "remote-stop-active"
    let runs = 0
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    let fail!: () => void
    const failing = new Promise<void>((resolve) => (fail = resolve))
    const Serve = Layer.effectDiscard(
      Server.start(
        {
          [Double.type]: () =>
            Effect.gen(function* () {
              runs++
              started()
              yield* Effect.promise(() => failing)
              return yield* Effect.fail(new Error("the resize failed"))
            })
        },
        { queues: { [queue]: 1 }, retryDelay: () => 5_000, shutdownTimeoutMs: 500 }
      )
    ).pipe(Layer.provide(testBrokerLayer() as Layer.Layer<Broker>), Layer.orDie) as Layer.Layer<
      never,
      never,
      WorkflowEngine.WorkflowEngine
    >
    const rt = makeRuntime(engineLayer("redis", prefix), Layer.merge(CalcLive, Serve))
    try {
      const id = await rt.runPromise(Calc.execute({ n: 9, queue }, { discard: true }))
      const taskKey = queueKeys(queue).task(RemoteStep.remoteTaskId(id, "double", 1))
      await running
      expect(await c.hget(taskKey, "state")).toBe("active")
      await rt.runPromise(Calc.interrupt(id))
      expect(await rt.runPromise(completed(id))).toEqual({ failure: [{ interrupt: true }] })
      // Still running: left to finish.
      expect(await c.hget(taskKey, "state")).toBe("active")
      fail()
      await waitFor(
        "the failed attempt's retry deleted",
        () => c.exists(taskKey),
        (n) => n === 0
      )
      expect(await c.zrange(queueKeys(queue).retry, "0", "-1")).toEqual([])
      expect(runs).toBe(1)
    } finally {
      fail()
      await rt.dispose()
    }
  })
})

describe("remote steps elsewhere", () => {
  it("under effect's in-memory engine: a defect saying they need the durable engine", async () => {
    const exit = await runProgram(
      engineLayer("memory", "unused"),
      CalcLive as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>,
      Calc.execute({ n: 1, queue: "q" })
    )
    expect(normalize(exit)).toEqual({
      failure: [
        {
          die: `RemoteStep "double": remote steps need effect-asynq's durable engine (layer() of effect-asynq/workflow)`
        }
      ]
    })
  })

  it("bad options: InvalidArgument naming the option", () => {
    const attempt = (f: () => unknown) => {
      try {
        f()
        return undefined
      } catch (e) {
        return e
      }
    }
    const short = attempt(() => RemoteStep.make({ name: "x", task: Double, retentionMs: 1000 }))
    expect(short).toBeInstanceOf(InvalidArgument)
    expect((short as InvalidArgument).field).toBe("retentionMs")
    const empty = attempt(() => RemoteStep.make({ name: " ", task: Double }))
    expect((empty as InvalidArgument).field).toBe("name")
    const poll = attempt(() => RemoteStep.make({ name: "x", task: Double, poll: { initialMs: 500, maxMs: 100 } }))
    expect((poll as InvalidArgument).field).toBe("poll.maxMs")
  })
})
