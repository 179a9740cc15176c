import { Cause, Effect, Exit, Fiber } from "effect"
import { errorText } from "../../src/processor/errors.js"
import { describe, expect, it } from "vitest"
import { asyncMiddleware, type Middleware } from "../../src/processor/Handler.js"
import { handlerOf, ServeMux } from "../../src/processor/Mux.js"
import { makeTask } from "../../src/processor/Task.js"
import { TaskContext } from "../../src/processor/TaskContext.js"
import { emptyTaskMessage } from "../../src/wire/TaskMessage.js"
import { waitFor } from "../support/waitFor.js"

const taskOf = (type: string) =>
  makeTask({ ...emptyTaskMessage, type, id: `id-${type}`, queue: "default" }, new Date(0), {
    taskId: "x",
    write: async () => 0
  })

const failureText = (exit: Exit.Exit<void, unknown>) =>
  Exit.isFailure(exit) ? errorText(Cause.squash(exit.cause)) : "success"

const runHandler = (h: ReturnType<typeof handlerOf>, type: string) => {
  const task = taskOf(type)
  const ctx = TaskContext.of({
    task,
    taskId: task.id,
    retryCount: 0,
    maxRetry: 0,
    queue: "default",
    deadline: new Date(0),
    signal: new AbortController().signal,
    writeResult: () => Effect.succeed(0)
  })
  return Effect.runPromiseExit(h(task).pipe(Effect.provideService(TaskContext, ctx)) as Effect.Effect<void, unknown>)
}

describe("ServeMux", () => {
  it("routes to the longest matching prefix", async () => {
    const hits: Array<string> = []
    const mux = new ServeMux()
      .handle("images", async () => void hits.push("images"))
      .handle("images:thumbnails", async () => void hits.push("thumbnails"))
      .handle("email:", () => Effect.sync(() => void hits.push("email")))
    for (const t of ["images:thumbnails:small", "images:resize", "images", "email:welcome"])
      await runHandler(mux.handler, t)
    expect(hits).toEqual(["thumbnails", "images", "images", "email"])
    expect(mux.match("imag")).toBeUndefined()
  })

  it("fails with HandlerNotFound for an unknown type, through the middleware", async () => {
    const seen: Array<string> = []
    const mux = new ServeMux().handle("a", async () => {})
    mux.use((next) => (task) => Effect.sync(() => void seen.push(task.type)).pipe(Effect.andThen(next(task))))
    const exit = await runHandler(mux.handler, "b:unknown")
    expect(failureText(exit)).toBe('handler not found for task "b:unknown"')
    expect(seen).toEqual(["b:unknown"])
  })

  it("rejects empty and duplicate patterns with InvalidArgument", () => {
    const mux = new ServeMux().handle("x", async () => {})
    expect(() => mux.handle("x", async () => {})).toThrow(/already registered for pattern "x"/)
    expect(() => mux.handle(" ", async () => {})).toThrow(/non-empty/)
  })

  it("runs middleware in the order added, around the handler", async () => {
    const log: Array<string> = []
    const mw =
      (name: string): Middleware =>
      (next) =>
      (task) =>
        Effect.sync(() => void log.push(`${name}>`)).pipe(
          Effect.andThen(next(task)),
          Effect.andThen(Effect.sync(() => void log.push(`<${name}`)))
        )
    const mux = new ServeMux().handle("t", async () => void log.push("handler"))
    mux.use(mw("a"), mw("b"))
    mux.use(
      asyncMiddleware(async (_task, _signal, next) => {
        log.push("c>")
        await next()
        log.push("<c")
      })
    )
    await runHandler(mux.handler, "t")
    expect(log).toEqual(["a>", "b>", "c>", "handler", "<c", "<b", "<a"])
  })

  it("turns a record into a mux and a function into a catch-all handler; a thrown error is the failure", async () => {
    const viaRecord = handlerOf({ "r:": async () => {} })
    expect(Exit.isSuccess(await runHandler(viaRecord, "r:1"))).toBe(true)
    expect(Exit.isFailure(await runHandler(viaRecord, "other"))).toBe(true)
    const thrower = handlerOf(() => {
      throw new Error("sync throw")
    })
    const exit = await runHandler(thrower, "anything")
    expect(failureText(exit)).toBe("sync throw")
  })

  it("interrupting an attempt interrupts an Effect handler behind an async middleware (not left running)", async () => {
    let handlerStarted = false
    let handlerStopped = false
    const mux = new ServeMux().handle("slow", () =>
      Effect.sync(() => void (handlerStarted = true)).pipe(
        Effect.andThen(Effect.never),
        Effect.onInterrupt(() => Effect.sync(() => void (handlerStopped = true)))
      )
    )
    mux.use(asyncMiddleware(async (_task, _signal, next) => next()))
    const task = taskOf("slow")
    const ctx = TaskContext.of({
      task,
      taskId: task.id,
      retryCount: 0,
      maxRetry: 0,
      queue: "default",
      deadline: new Date(0),
      signal: new AbortController().signal,
      writeResult: () => Effect.succeed(0)
    })
    const started = Effect.runFork(
      mux.handler(task).pipe(Effect.provideService(TaskContext, ctx)) as Effect.Effect<void, unknown>
    )
    await waitFor("the handler to start", () => handlerStarted)
    expect(handlerStopped).toBe(false)
    await Effect.runPromise(Fiber.interrupt(started))
    await waitFor("the handler to be interrupted", () => handlerStopped)
    expect(handlerStopped).toBe(true)
  })
})
