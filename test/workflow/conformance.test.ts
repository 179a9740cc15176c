/**
 * The conformance suite: the same workflow programs run against effect's `WorkflowEngine.layerMemory`
 * (the reference) and effect-asynq's durable engine (`effect-asynq/workflow`, on a real Redis);
 * each case compares the two results, and the side effects (how often each activity body ran).
 */
import { Effect, Layer, Option, Schedule, Schema } from "effect"
import { Activity, DurableDeferred, Workflow } from "effect/workflow"
import { beforeAll, describe, expect, it } from "vitest"
import { flushTestDb } from "../support/redis.js"
import { engineLayer, engines, type EngineKind, normalize, runProgram } from "./support.js"

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
const Steps = Workflow.make("Conf.Steps", { payload: { n: Schema.Number }, success: Schema.Number, idempotencyKey: ({ n }) => String(n) })
const steps: Case = {
  name: "activities run once per execution; their results flow; the same payload is the same execution",
  make: (count) => ({
    registrations: Steps.toLayer(({ n }) =>
      Effect.gen(function* () {
        const a = yield* Activity.make({ name: "a", success: Schema.Number, execute: Effect.sync(() => (count("a"), n + 1)) })
        return yield* Activity.make({ name: "b", success: Schema.Number, execute: Effect.sync(() => (count("b"), a * 2)) })
      })
    ),
    program: Effect.all([Steps.execute({ n: 1 }), Steps.execute({ n: 1 }), Steps.execute({ n: 2 })])
  })
}

// --- typed failure ----------------------------------------------------------------------------
const Fails = Workflow.make("Conf.Fails", { payload: { id: Schema.String }, error: Boom, idempotencyKey: ({ id }) => id })
const fails: Case = {
  name: "a failing activity fails the workflow with its typed error",
  make: (count) => ({
    registrations: Fails.toLayer(() =>
      Activity.make({ name: "boom", error: Boom, execute: Effect.suspend(() => (count("boom"), Effect.fail({ _tag: "Boom" as const, reason: "no" }))) })
    ),
    program: Fails.execute({ id: "1" })
  })
}

// --- retries ----------------------------------------------------------------------------------
const Retries = Workflow.make("Conf.Retries", { payload: { id: Schema.String }, success: Schema.Number, error: Boom, idempotencyKey: ({ id }) => id })
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
    registrations: Dies.toLayer(() => Activity.make({ name: "kaput", execute: Effect.suspend(() => (count("kaput"), Effect.die(new Error("kaput")))) })),
    program: Dies.execute({ id: "d" })
  })
}

// --- idempotent start with discard ------------------------------------------------------------
const Once = Workflow.make("Conf.Once", { payload: { id: Schema.String }, success: Schema.String, idempotencyKey: ({ id }) => id })
const once: Case = {
  name: "execute with discard returns the execution id; starting again is the same execution",
  make: (count) => ({
    registrations: Once.toLayer(({ id }) => Activity.make({ name: "once", success: Schema.String, execute: Effect.sync(() => (count("once"), `done ${id}`)) })),
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
const Approval = Workflow.make("Conf.Approval", { payload: { id: Schema.String }, success: Schema.String, idempotencyKey: ({ id }) => id })
const Approved = DurableDeferred.make("approved", { success: Schema.String })
const approval: Case = {
  name: "a deferred completed from outside resumes the execution; activities before it do not run again",
  make: (count) => ({
    registrations: Approval.toLayer(({ id }) =>
      Effect.gen(function* () {
        const request = yield* Activity.make({ name: "request", success: Schema.String, execute: Effect.sync(() => (count("request"), `req-${id}`)) })
        const who = yield* DurableDeferred.await(Approved)
        return yield* Activity.make({ name: "finish", success: Schema.String, execute: Effect.sync(() => (count("finish"), `${request} approved by ${who}`)) })
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

const Rejected = Workflow.make("Conf.Rejected", { payload: { id: Schema.String }, success: Schema.String, error: Boom, idempotencyKey: ({ id }) => id })
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
const Parked = Workflow.make("Conf.Parked", { payload: { id: Schema.String }, success: Schema.String, idempotencyKey: ({ id }) => id }).annotate(Workflow.SuspendOnFailure, true)
const parked: Case = {
  name: "SuspendOnFailure parks a failing execution; an explicit resume runs it again",
  make: (count) => {
    let fixed = false
    return {
      registrations: Parked.toLayer(() =>
        Effect.gen(function* () {
          const before = yield* Activity.make({ name: "before", success: Schema.String, execute: Effect.sync(() => (count("before"), "ok")) })
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
const Fan = Workflow.make("Conf.Fan", { payload: { n: Schema.Number }, success: Schema.Number, idempotencyKey: ({ n }) => String(n) })
const fan: Case = {
  name: "fan-out of 100 activities and fan-in",
  make: (count) => ({
    registrations: Fan.toLayer(({ n }) =>
      Effect.map(
        Effect.all(
          Array.from({ length: n }, (_, i) => Activity.make({ name: `square/${i}`, success: Schema.Number, execute: Effect.sync(() => (count("square"), i * i)) })),
          { concurrency: 10 }
        ),
        (xs) => xs.reduce((a, b) => a + b, 0)
      )
    ),
    program: Fan.execute({ n: 100 })
  })
}

const cases: ReadonlyArray<Case> = [steps, fails, retries, dies, once, approval, rejected, parked, fan]

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
