/**
 * The inspector's view of durable workflow executions, made by the real engine on a real Redis:
 * states, activities, deferreds and clocks as stored; a bounded, cursor-paged listing (shards
 * included); resume and cancel with the engine's own effect (Workflow.resume / interrupt).
 */
import { Effect, Layer, Option, Schedule, Schema } from "effect"
import { Activity, DurableClock, DurableDeferred, Workflow, type WorkflowEngine } from "effect/workflow"
import { beforeAll, describe, expect, it } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import {
  cancelWorkflowExecution,
  getWorkflowExecution,
  listWorkflowExecutions,
  listWorkflows,
  resumeWorkflowExecution,
  workflowExecutionsPage,
  type WorkflowExecutionSummary
} from "../../src/inspector/index.js"
import { testBrokerLayer } from "../support/arrange.js"
import { createInspector } from "../../src/inspector/promise.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"
import { engineLayer, normalize, runProgram } from "../workflow/support.js"

beforeAll(() => flushTestDb())

const withBroker = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
  Effect.provide(eff, testBrokerLayer() as Layer.Layer<Broker>)
/** The inspector's outcome of an operation as data: its value, or its error's tag. */
const attempt = <A, E extends { _tag: string }>(eff: Effect.Effect<A, E, Broker>) =>
  withBroker(eff).pipe(
    Effect.map((value) => ({ ok: value })),
    Effect.catch((e) => Effect.succeed({ error: e._tag }))
  )
/** Waits (bounded: 10 s) until `check` holds of the execution's detail. */
const until = <A>(read: Effect.Effect<A, unknown, Broker>, check: (a: A) => boolean) =>
  withBroker(read).pipe(
    Effect.orDie,
    Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: check }),
    Effect.timeout("10 seconds")
  )

describe("an execution in detail", () => {
  const Order = Workflow.make("Wf.Order", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  })
  const Approval = DurableDeferred.make("approval", { success: Schema.Struct({ by: Schema.String }) })
  const Lookup = Activity.make({ name: "lookup", success: Schema.Number, execute: Effect.succeed(42) })
  const Reject = Activity.make({ name: "reject", error: Schema.String, execute: Effect.fail("out of stock") })

  it("shows activities done and failed, a deferred done, a clock scheduled with its due time; cancel interrupts it as Workflow.interrupt does", async () => {
    const prefix = "seen"
    const exit = await runProgram(
      engineLayer("redis", prefix),
      Order.toLayer(() =>
        Effect.gen(function* () {
          const n = yield* Lookup
          const r = yield* Reject.pipe(Effect.catch((e) => Effect.succeed(`caught ${e}`)))
          const { by } = yield* DurableDeferred.await(Approval)
          yield* DurableClock.sleep({ name: "cool-off", duration: "1 hour" })
          return `${n} ${r} ${by}`
        })
      ),
      Effect.gen(function* () {
        const id = yield* Order.execute({ id: "o1" }, { discard: true })
        const waiting = yield* until(
          getWorkflowExecution("Wf.Order", id, { queue: prefix }),
          (x) => x.state === "suspended"
        )
        const token = yield* DurableDeferred.tokenFromPayload(Approval, { workflow: Order, payload: { id: "o1" } })
        const before = Date.now()
        yield* DurableDeferred.succeed(Approval, { token, value: { by: "ann" } })
        const sleeping = yield* until(
          getWorkflowExecution("Wf.Order", id, { queue: prefix }),
          (x) => x.state === "suspended" && x.clocks.length === 1
        )
        const cancelled = yield* attempt(cancelWorkflowExecution("Wf.Order", id, { queue: prefix }))
        const ended = yield* until(
          getWorkflowExecution("Wf.Order", id, { queue: prefix }),
          (x) => x.state === "complete"
        )
        const again = yield* attempt(cancelWorkflowExecution("Wf.Order", id, { queue: prefix }))
        const polled = yield* Order.poll(id)
        return { id, waiting, sleeping, before, cancelled, ended, again, polled: Option.map(polled, (r) => r._tag) }
      })
    )
    expect(exit._tag).toBe("Success")
    if (exit._tag !== "Success") return
    const { id, waiting, sleeping, before, cancelled, ended, again, polled } = exit.value
    expect(waiting).toMatchObject({
      workflow: "Wf.Order",
      executionId: id,
      queue: "seen:Wf.Order",
      state: "suspended",
      failed: false,
      outcome: "suspended",
      payload: { id: "o1" },
      parent: undefined,
      interrupt: undefined,
      activities: [
        { name: "lookup", attempt: 1, status: "done", result: 42 },
        { name: "reject", attempt: 1, status: "failed", error: "out of stock" }
      ],
      // Recorded as the run suspended: the deferred it waits on.
      deferreds: [{ name: "approval", status: "waiting" }],
      clocks: []
    })
    expect(sleeping.deferreds).toEqual([{ name: "approval", status: "done", value: { by: "ann" } }])
    expect(sleeping.clocks).toHaveLength(1)
    const clock = sleeping.clocks[0]!
    expect(clock).toMatchObject({ name: "cool-off", status: "scheduled" })
    // Due an hour after it was scheduled (the scheduled set holds whole seconds, rounded up).
    expect(clock.dueAtMs! - before).toBeGreaterThanOrEqual(3600_000 - 1000)
    expect(clock.dueAtMs! - Date.now()).toBeLessThanOrEqual(3600_000 + 1000)
    expect(cancelled).toMatchObject({ ok: { executionId: id, from: "suspended", outcome: "run-enqueued" } })
    expect(ended).toMatchObject({ state: "complete", outcome: "failure", error: "interrupted", interrupt: "interrupt" })
    expect(again).toEqual({ error: "InvalidState" })
    expect(polled).toEqual(Option.some("Complete"))
  })

  it("an unknown execution or workflow is an error naming it, not an empty view", async () => {
    const exit = await runProgram(
      engineLayer("redis", "seen"),
      Layer.empty as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine>,
      Effect.all([
        attempt(getWorkflowExecution("Wf.Order", "no-such-id", { queue: "seen" })),
        attempt(resumeWorkflowExecution("Wf.Order", "no-such-id", { queue: "seen" })),
        attempt(getWorkflowExecution("Wf.Nobody", "x", { queue: "seen" })),
        attempt(listWorkflowExecutions("Wf.Order", { queue: "seen", cursor: "nonsense" })),
        attempt(listWorkflowExecutions("Wf.Order", { queue: "seen", pageSize: 0 })),
        attempt(listWorkflowExecutions("Wf.Order", { queue: "seen", shards: 0 }))
      ])
    )
    expect(normalize(exit)).toEqual({
      success: [
        { error: "ExecutionNotFound" },
        { error: "ExecutionNotFound" },
        { error: "QueueNotFound" },
        { error: "InvalidArgument" },
        { error: "InvalidArgument" },
        { error: "InvalidArgument" }
      ]
    })
  })
})

describe("SuspendOnFailure: a failed execution is listed as failed and retried by resume", () => {
  const Fragile = Workflow.make("Wf.Brittle", {
    payload: { id: Schema.String },
    success: Schema.String,
    idempotencyKey: ({ id }) => id
  }).annotate(Workflow.SuspendOnFailure, true)

  it("state failed with its error; resume runs it again (as Workflow.resume); it completes", async () => {
    const prefix = "brittle"
    let fixed = false
    const exit = await runProgram(
      engineLayer("redis", prefix),
      Fragile.toLayer(() => (fixed ? Effect.succeed("fixed") : Effect.die(new Error("broken")))),
      Effect.gen(function* () {
        const id = yield* Fragile.execute({ id: "f" }, { discard: true })
        const parked = yield* until(
          getWorkflowExecution("Wf.Brittle", id, { queue: prefix }),
          (x) => x.state === "suspended"
        )
        const failedOnes = yield* withBroker(listWorkflowExecutions("Wf.Brittle", { queue: prefix, state: "failed" }))
        const completeOnes = yield* withBroker(
          listWorkflowExecutions("Wf.Brittle", { queue: prefix, state: "complete" })
        )
        fixed = true
        const resumed = yield* attempt(resumeWorkflowExecution("Wf.Brittle", id, { queue: prefix }))
        const result = yield* Fragile.execute({ id: "f" })
        const after = yield* withBroker(getWorkflowExecution("Wf.Brittle", id, { queue: prefix }))
        return { id, parked, failedOnes, completeOnes, resumed, result, after }
      })
    )
    expect(exit._tag).toBe("Success")
    if (exit._tag !== "Success") return
    const { id, parked, failedOnes, completeOnes, resumed, result, after } = exit.value
    expect(parked).toMatchObject({ state: "suspended", failed: true, outcome: "suspended" })
    expect(parked.error).toContain("broken")
    expect(failedOnes.executions.map((e) => e.executionId)).toEqual([id])
    expect(completeOnes.executions).toEqual([])
    expect(resumed).toMatchObject({ ok: { from: "suspended", failed: true, outcome: "run-enqueued" } })
    expect(result).toBe("fixed")
    expect(after).toMatchObject({
      state: "complete",
      failed: false,
      outcome: "success",
      result: { _tag: "Complete", exit: { _tag: "Success", value: "fixed" } }
    })
  })
})

describe("listing", () => {
  const Tiny = Workflow.make("Wf.Tiny", {
    payload: { n: Schema.Number },
    success: Schema.Number,
    idempotencyKey: ({ n }) => String(n)
  })

  it("pages through every execution of every shard by cursor (a page is bounded), with shards found in asynq:queues or given", async () => {
    const prefix = "tiny"
    const exit = await runProgram(
      engineLayer("redis", prefix, { shards: 3 }),
      Tiny.toLayer(({ n }) => Effect.succeed(n * 2)),
      Effect.gen(function* () {
        const ids = yield* Effect.forEach(
          Array.from({ length: 40 }, (_, n) => n),
          (n) => Tiny.execute({ n }, { discard: true })
        )
        yield* Effect.forEach(ids, (_, n) => Tiny.execute({ n }), { concurrency: 10 })
        const all = (shards: number | undefined) =>
          Effect.gen(function* () {
            const seen: Array<WorkflowExecutionSummary> = []
            const pages: Array<number> = []
            let cursor: string | undefined
            do {
              const page = yield* withBroker(
                listWorkflowExecutions("Wf.Tiny", { queue: prefix, pageSize: 7, cursor, shards })
              )
              seen.push(...page.executions)
              pages.push(page.executions.length)
              cursor = page.cursor
            } while (cursor !== "" && pages.length < 100)
            return { seen, pages }
          })
        // Numbered pages (the CLI's --page, the dashboard's pager) walk the same listing.
        const numbered: Array<WorkflowExecutionSummary> = []
        let more = true
        for (let page = 1; more && page < 100; page++) {
          const p = yield* withBroker(workflowExecutionsPage("Wf.Tiny", { queue: prefix, pageSize: 7, page }))
          numbered.push(...p.executions)
          more = p.more
        }
        const workflows = yield* withBroker(listWorkflows({ queue: prefix }))
        return { ids, found: yield* all(undefined), given: yield* all(3), numbered, workflows }
      })
    )
    expect(exit._tag).toBe("Success")
    if (exit._tag !== "Success") return
    const { ids, found, given, numbered, workflows } = exit.value
    expect(workflows).toEqual([{ workflow: "Wf.Tiny", queues: ["tiny:Wf.Tiny#0", "tiny:Wf.Tiny#1", "tiny:Wf.Tiny#2"] }])
    expect(numbered.map((e) => e.executionId)).toEqual(found.seen.map((e) => e.executionId))
    for (const { seen, pages } of [found, given]) {
      expect(new Set(seen.map((e) => e.executionId))).toEqual(new Set(ids))
      expect(seen.every((e) => e.state === "complete" && e.outcome === "success" && e.runs === 1)).toBe(true)
      expect(new Set(seen.map((e) => e.queue))).toEqual(new Set(["tiny:Wf.Tiny#0", "tiny:Wf.Tiny#1", "tiny:Wf.Tiny#2"]))
      expect(pages.length).toBeGreaterThan(1)
    }
  })

  it("a page does bounded work: among 30,000 other keys it returns early with a cursor, and the pages still find every execution (the Promise inspector too)", async () => {
    const c = rawClient()
    const inspector = createInspector({ url: testRedisUrl() })
    try {
      for (let i = 0; i < 30; i++) {
        const p = c.pipeline()
        for (let j = 0; j < 1000; j++) p.set(`filler:${i}:${j}`, "x")
        await p.exec()
      }
      const first = await inspector.listWorkflowExecutions("Wf.Tiny", { queue: "tiny", shards: 1, pageSize: 1 })
      // shards 1: the one queue "tiny:Wf.Tiny", which holds none (the executions are on the 3 shards)
      expect(first).toEqual({ executions: [], cursor: expect.stringMatching(/^0:[1-9]\d*$/) })
      const seen = new Set<string>()
      let cursor: string | undefined
      let pages = 0
      do {
        const page = await inspector.listWorkflowExecutions("Wf.Tiny", { queue: "tiny", pageSize: 5, cursor })
        for (const e of page.executions) seen.add(e.executionId)
        cursor = page.cursor
        pages++
      } while (cursor !== "" && pages < 1000)
      expect(seen.size).toBe(40)
      expect(pages).toBeGreaterThan(3)
    } finally {
      await inspector.close()
      c.disconnect()
    }
  })
})
