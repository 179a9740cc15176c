/**
 * The conformance suite: the same workflow programs run against effect's `WorkflowEngine.layerMemory`
 * (the reference) and effect-asynq's durable engine (`effect-asynq/workflow`, on a real Redis);
 * each case compares the two results, and the side effects (how often each activity body ran).
 */
import { Effect, Layer, Option, Schedule, Schema } from "effect"
import { Activity, DurableClock, DurableDeferred, Workflow, WorkflowEngine } from "effect/workflow"
import { beforeAll, describe, expect, it } from "vitest"
import { flushTestDb } from "../support/redis.js"
import { engineLayer, engines, type EngineKind, normalize, normalize as normalizeExit, runProgram } from "./support.js"

beforeAll(() => flushTestDb())

/** Counts how often each activity body ran, per run of a case. */
const counter = () => {
  const counts: Record<string, number> = {}
  return { counts, count: (name: string) => void (counts[name] = (counts[name] ?? 0) + 1) }
}

/** Polls until the execution has a result (a suspension counts), bounded by the program's timeout. */
const untilPolled = <A, E, R>(poll: Effect.Effect<Option.Option<Workflow.Result<A, E>>, never, R>) =>
  poll.pipe(
    Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: Option.isSome }),
    Effect.map((r) => (Option.isSome(r) ? r.value : undefined)!)
  )

const Boom = Schema.Struct({ _tag: Schema.tag("Boom"), reason: Schema.String })

interface Case {
  readonly name: string
  readonly make: (count: (name: string) => void) => {
    readonly registrations: Layer.Layer<never, never, any>
    readonly program: Effect.Effect<unknown, unknown, any>
  }
}

// --- activities -------------------------------------------------------------------------------
const Steps = Workflow.make("Conf.Steps", {
  payload: { n: Schema.Number },
  success: Schema.Number,
  idempotencyKey: ({ n }) => String(n)
})
const steps: Case = {
  name: "activities run once per execution; their results flow; the same payload is the same execution",
  make: (count) => ({
    registrations: Steps.toLayer(({ n }) =>
      Effect.gen(function* () {
        const a = yield* Activity.make({
          name: "a",
          success: Schema.Number,
          execute: Effect.sync(() => (count("a"), n + 1))
        })
        return yield* Activity.make({
          name: "b",
          success: Schema.Number,
          execute: Effect.sync(() => (count("b"), a * 2))
        })
      })
    ),
    program: Effect.all([Steps.execute({ n: 1 }), Steps.execute({ n: 1 }), Steps.execute({ n: 2 })])
  })
}

// --- typed failure ----------------------------------------------------------------------------
const Fails = Workflow.make("Conf.Fails", {
  payload: { id: Schema.String },
  error: Boom,
  idempotencyKey: ({ id }) => id
})
const fails: Case = {
  name: "a failing activity fails the workflow with its typed error",
  make: (count) => ({
    registrations: Fails.toLayer(() =>
      Activity.make({
        name: "boom",
        error: Boom,
        execute: Effect.suspend(() => (count("boom"), Effect.fail({ _tag: "Boom" as const, reason: "no" })))
      })
    ),
    program: Fails.execute({ id: "1" })
  })
}

// --- retries ----------------------------------------------------------------------------------
const Retries = Workflow.make("Conf.Retries", {
  payload: { id: Schema.String },
  success: Schema.Number,
  error: Boom,
  idempotencyKey: ({ id }) => id
})
const retries: Case = {
  name: "Activity.retry: each attempt is its own recorded activity; the third succeeds",
  make: (count) => ({
    registrations: Retries.toLayer(() =>
      Activity.make({
        name: "flaky",
        success: Schema.Number,
        error: Boom,
        execute: Effect.gen(function* () {
          const attempt = yield* Activity.CurrentAttempt
          count("flaky")
          if (attempt < 3) return yield* Effect.fail({ _tag: "Boom" as const, reason: `attempt ${attempt}` })
          return attempt
        })
      }).pipe(Activity.retry({ times: 5 }))
    ),
    program: Retries.execute({ id: "r" })
  })
}

// --- defects ----------------------------------------------------------------------------------
const Dies = Workflow.make("Conf.Dies", { payload: { id: Schema.String }, idempotencyKey: ({ id }) => id })
const dies: Case = {
  name: "a defect in an activity is captured as the workflow's failure",
  make: (count) => ({
    registrations: Dies.toLayer(() =>
      Activity.make({ name: "kaput", execute: Effect.suspend(() => (count("kaput"), Effect.die(new Error("kaput")))) })
    ),
    program: Dies.execute({ id: "d" })
  })
}

// --- idempotent start with discard ------------------------------------------------------------
const Once = Workflow.make("Conf.Once", {
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ id }) => id
})
const once: Case = {
  name: "execute with discard returns the execution id; starting again is the same execution",
  make: (count) => ({
    registrations: Once.toLayer(({ id }) =>
      Activity.make({ name: "once", success: Schema.String, execute: Effect.sync(() => (count("once"), `done ${id}`)) })
    ),
    program: Effect.gen(function* () {
      const first = yield* Once.execute({ id: "o" }, { discard: true })
      const second = yield* Once.execute({ id: "o" }, { discard: true })
      const expected = yield* Once.executionId({ id: "o" })
      const result = yield* Once.execute({ id: "o" })
      const polled = yield* Once.poll(first)
      return { sameId: first === second && first === expected, result, polled: Option.map(polled, (r) => r._tag) }
    })
  })
}

// --- deferreds --------------------------------------------------------------------------------
const Approval = Workflow.make("Conf.Approval", {
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ id }) => id
})
const Approved = DurableDeferred.make("approved", { success: Schema.String })
const approval: Case = {
  name: "a deferred completed from outside resumes the execution; activities before it do not run again",
  make: (count) => ({
    registrations: Approval.toLayer(({ id }) =>
      Effect.gen(function* () {
        const request = yield* Activity.make({
          name: "request",
          success: Schema.String,
          execute: Effect.sync(() => (count("request"), `req-${id}`))
        })
        const who = yield* DurableDeferred.await(Approved)
        return yield* Activity.make({
          name: "finish",
          success: Schema.String,
          execute: Effect.sync(() => (count("finish"), `${request} approved by ${who}`))
        })
      })
    ),
    program: Effect.gen(function* () {
      const id = yield* Approval.execute({ id: "x" }, { discard: true })
      const parked = yield* untilPolled(Approval.poll(id))
      const token = yield* DurableDeferred.tokenFromPayload(Approved, { workflow: Approval, payload: { id: "x" } })
      yield* DurableDeferred.succeed(Approved, { token, value: "ann" })
      // A second completion loses: the first write wins.
      yield* DurableDeferred.succeed(Approved, { token, value: "bob" })
      const result = yield* Approval.execute({ id: "x" })
      return { parked: parked._tag, result }
    })
  })
}

const Rejected = Workflow.make("Conf.Rejected", {
  payload: { id: Schema.String },
  success: Schema.String,
  error: Boom,
  idempotencyKey: ({ id }) => id
})
const Decision = DurableDeferred.make("decision", { success: Schema.String, error: Boom })
const rejected: Case = {
  name: "a deferred failed from outside fails the workflow with the typed error",
  make: () => ({
    registrations: Rejected.toLayer(() => DurableDeferred.await(Decision)),
    program: Effect.gen(function* () {
      const id = yield* Rejected.execute({ id: "y" }, { discard: true })
      yield* untilPolled(Rejected.poll(id))
      const token = yield* DurableDeferred.tokenFromPayload(Decision, { workflow: Rejected, payload: { id: "y" } })
      yield* DurableDeferred.fail(Decision, { token, error: { _tag: "Boom" as const, reason: "rejected" } })
      return yield* Rejected.execute({ id: "y" })
    })
  })
}

// --- SuspendOnFailure + resume ----------------------------------------------------------------
const Parked = Workflow.make("Conf.Parked", {
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ id }) => id
}).annotate(Workflow.SuspendOnFailure, true)
const parked: Case = {
  name: "SuspendOnFailure parks a failing execution; an explicit resume runs it again",
  make: (count) => {
    let fixed = false
    return {
      registrations: Parked.toLayer(() =>
        Effect.gen(function* () {
          const before = yield* Activity.make({
            name: "before",
            success: Schema.String,
            execute: Effect.sync(() => (count("before"), "ok"))
          })
          if (!fixed) return yield* Effect.die(new Error("not yet"))
          return `${before} after the fix`
        })
      ),
      program: Effect.gen(function* () {
        const id = yield* Parked.execute({ id: "p" }, { discard: true })
        const first = yield* untilPolled(Parked.poll(id))
        fixed = true
        yield* Parked.resume(id)
        const result = yield* Parked.execute({ id: "p" })
        return { first: first._tag, failed: first._tag === "Suspended" ? first.failed : undefined, result }
      })
    }
  }
}

// --- fan-out / fan-in -------------------------------------------------------------------------
const Fan = Workflow.make("Conf.Fan", {
  payload: { n: Schema.Number },
  success: Schema.Number,
  idempotencyKey: ({ n }) => String(n)
})
const fan: Case = {
  name: "fan-out of 100 activities and fan-in",
  make: (count) => ({
    registrations: Fan.toLayer(({ n }) =>
      Effect.map(
        Effect.all(
          Array.from({ length: n }, (_, i) =>
            Activity.make({
              name: `square/${i}`,
              success: Schema.Number,
              execute: Effect.sync(() => (count("square"), i * i))
            })
          ),
          { concurrency: 10 }
        ),
        (xs) => xs.reduce((a, b) => a + b, 0)
      )
    ),
    program: Fan.execute({ n: 100 })
  })
}

// --- child workflows --------------------------------------------------------------------------
const Child = Workflow.make("Conf.Child", {
  payload: { n: Schema.Number },
  success: Schema.Number,
  error: Boom,
  idempotencyKey: ({ n }) => String(n)
})
const Parent = Workflow.make("Conf.Parent", {
  payload: { n: Schema.Number },
  success: Schema.Number,
  error: Boom,
  idempotencyKey: ({ n }) => String(n)
})
const children: Case = {
  name: "child workflows: the parent suspends until each child completes, then gets its result (and its typed failure)",
  make: (count) => ({
    registrations: Layer.mergeAll(
      Child.toLayer(({ n }) =>
        Activity.make({
          name: "times10",
          success: Schema.Number,
          error: Boom,
          execute: Effect.suspend(
            () => (
              count(`child ${n}`),
              n < 0 ? Effect.fail({ _tag: "Boom" as const, reason: `negative ${n}` }) : Effect.succeed(n * 10)
            )
          )
        })
      ),
      Parent.toLayer(({ n }) =>
        Effect.gen(function* () {
          const a = yield* Child.execute({ n })
          const b = yield* Child.execute({ n: n + 1 })
          return a + b
        })
      )
    ),
    program: Effect.all([Effect.exit(Parent.execute({ n: 1 })), Effect.exit(Parent.execute({ n: -5 }))]).pipe(
      Effect.map((xs) => xs.map(normalizeExit))
    )
  })
}

const FanChildren = Workflow.make("Conf.FanChildren", {
  payload: { n: Schema.Number },
  success: Schema.Number,
  error: Boom,
  idempotencyKey: ({ n }) => String(n)
})
const fanChildren: Case = {
  name: "fan-out of 100 child workflows and fan-in",
  make: (count) => ({
    registrations: Layer.mergeAll(
      Child.toLayer(({ n }) =>
        Activity.make({
          name: "times10",
          success: Schema.Number,
          error: Boom,
          execute: Effect.sync(() => (count("child"), n * 10))
        })
      ),
      FanChildren.toLayer(({ n }) =>
        Effect.map(
          Effect.all(
            Array.from({ length: n }, (_, i) => Child.execute({ n: 1000 + i })),
            { concurrency: "unbounded" }
          ),
          (xs) => xs.reduce((a, b) => a + b, 0)
        )
      )
    ),
    program: FanChildren.execute({ n: 100 })
  })
}

// --- interrupt and compensation ---------------------------------------------------------------
const Trip = Workflow.make("Conf.Trip", {
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ id }) => id
})
const Confirmed = DurableDeferred.make("confirmed")
const untilComplete = <A, E, R>(poll: Effect.Effect<Option.Option<Workflow.Result<A, E>>, never, R>) =>
  poll.pipe(
    Effect.repeat({
      schedule: Schedule.spaced("20 millis"),
      until: (r) => Option.isSome(r) && r.value._tag === "Complete"
    }),
    Effect.map((r) => (Option.isSome(r) && r.value._tag === "Complete" ? normalizeExit(r.value.exit) : undefined))
  )
const tripWorkflow = (count: (name: string) => void) =>
  Trip.toLayer(() =>
    Effect.gen(function* () {
      yield* Activity.make({
        name: "book",
        success: Schema.String,
        execute: Effect.sync(() => (count("book"), "booking-1"))
      }).pipe(Workflow.withCompensation((booking) => Effect.sync(() => count(`cancel ${booking}`))))
      yield* DurableDeferred.await(Confirmed)
      return yield* Activity.make({
        name: "pay",
        success: Schema.String,
        execute: Effect.sync(() => (count("pay"), "paid"))
      })
    })
  )
const interrupted = (unsafe: boolean): Case => ({
  name: `${unsafe ? "interruptUnsafe" : "interrupt"} of a suspended execution: no new activity runs, compensations run, the interrupted result is recorded`,
  make: (count) => ({
    registrations: tripWorkflow(count),
    program: Effect.gen(function* () {
      const id = yield* Trip.execute({ id: unsafe ? "u" : "s" }, { discard: true })
      yield* untilPolled(Trip.poll(id))
      yield* unsafe
        ? Effect.flatMap(WorkflowEngine.WorkflowEngine, (e) => e.interruptUnsafe(Trip, id))
        : Trip.interrupt(id)
      return yield* untilComplete(Trip.poll(id))
    })
  })
})
const Long = Workflow.make("Conf.Long", {
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ id }) => id
})
const interruptedRunning: Case = {
  name: "interruptUnsafe of a running execution (an activity in flight): the run is cut, compensations run, the interrupted result is recorded",
  make: (count) => {
    let started!: () => void
    const inFlight = new Promise<void>((resolve) => (started = resolve))
    return {
      registrations: Long.toLayer(() =>
        Effect.gen(function* () {
          yield* Activity.make({
            name: "book",
            success: Schema.String,
            execute: Effect.sync(() => (count("book"), "booking-2"))
          }).pipe(Workflow.withCompensation((booking) => Effect.sync(() => count(`cancel ${booking}`))))
          yield* Activity.make({
            name: "wait",
            execute: Effect.andThen(
              Effect.sync(() => (count("wait"), started())),
              Effect.never
            )
          })
          return "never"
        })
      ),
      program: Effect.gen(function* () {
        const id = yield* Long.execute({ id: "l" }, { discard: true })
        yield* Effect.promise(() => inFlight)
        yield* Effect.flatMap(WorkflowEngine.WorkflowEngine, (e) => e.interruptUnsafe(Long, id))
        return yield* untilComplete(Long.poll(id))
      })
    }
  }
}

const compensated: Case = {
  name: "a workflow that fails after a compensated activity runs the compensation once",
  make: (count) => ({
    registrations: Fails.toLayer(() =>
      Effect.gen(function* () {
        yield* Activity.make({
          name: "reserve",
          success: Schema.String,
          execute: Effect.sync(() => (count("reserve"), "seat-7"))
        }).pipe(Workflow.withCompensation((seat) => Effect.sync(() => count(`release ${seat}`))))
        return yield* Activity.make({
          name: "charge",
          error: Boom,
          execute: Effect.suspend(() => (count("charge"), Effect.fail({ _tag: "Boom" as const, reason: "declined" })))
        })
      })
    ),
    program: Fails.execute({ id: "comp" })
  })
}

// --- durable clocks ---------------------------------------------------------------------------
const Nap = Workflow.make("Conf.Nap", {
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ id }) => id
})
const nap: Case = {
  name: "DurableClock.sleep through the engine's clock suspends the execution and wakes it when due",
  make: (count) => ({
    registrations: Nap.toLayer(() =>
      Effect.gen(function* () {
        yield* Activity.make({ name: "before", execute: Effect.sync(() => count("before")) })
        yield* DurableClock.sleep({ name: "nap", duration: "300 millis", inMemoryThreshold: 0 })
        yield* Activity.make({ name: "after", execute: Effect.sync(() => count("after")) })
        return "rested"
      })
    ),
    program: Effect.gen(function* () {
      const id = yield* Nap.execute({ id: "z" }, { discard: true })
      const parked = yield* untilPolled(Nap.poll(id))
      return { parked: parked._tag, result: yield* Nap.execute({ id: "z" }) }
    })
  })
}

const cases: ReadonlyArray<Case> = [
  steps,
  fails,
  retries,
  dies,
  once,
  approval,
  rejected,
  parked,
  fan,
  children,
  fanChildren,
  interrupted(false),
  interrupted(true),
  interruptedRunning,
  compensated,
  nap
]

let run = 0
const runCase = async (c: Case, kind: EngineKind) => {
  const { counts, count } = counter()
  const { registrations, program } = c.make(count)
  const exit = await runProgram(engineLayer(kind, `conf${++run}`), registrations, program)
  return { exit: normalize(exit), counts }
}

describe("conformance: effect's in-memory engine and effect-asynq/workflow give the same results", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const [memory, redis] = await Promise.all(engines.map((kind) => runCase(c, kind)))
    // The reference must succeed or fail as the case intends, not time out.
    expect(JSON.stringify(memory!.exit)).not.toContain("TimeoutError")
    expect(redis).toEqual(memory)
  })
})
