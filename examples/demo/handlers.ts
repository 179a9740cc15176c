/** The demo's handlers: an Effect handler, async handlers, and one that fails on its first attempt. */
import { Effect } from "effect"
import { ServeMux } from "../../src/processor/Mux.js"
import { TaskContext } from "../../src/processor/TaskContext.js"

const stamp = () => new Date().toISOString().slice(11, 23)

export const mux = new ServeMux()
  // An async handler: (task, signal) => Promise<void>
  .handle("email:welcome", async (task) => {
    const { to } = task.json<{ to: string }>()
    console.log(`${stamp()}  ✓ email:welcome     sent to ${to}`)
  })
  // An Effect handler reading the task context, writing a result
  .handle("image:resize", (task) =>
    Effect.gen(function* () {
      const ctx = yield* TaskContext
      const { src, width } = task.json<{ src: string; width: number }>()
      yield* Effect.sleep("50 millis")
      yield* ctx.writeResult({ thumbnail: `${src}@${width}w` })
      console.log(`${stamp()}  ✓ image:resize      ${src} -> ${width}px (task ${ctx.taskId})`)
    })
  )
  // Scheduled a few seconds ahead by the client
  .handle("report:daily", async (task) => {
    console.log(`${stamp()}  ✓ report:daily      ran at its scheduled time (${task.text()})`)
  })
  // Fails on the first attempt, succeeds on the retry
  .handle("payment:capture", async (task) => {
    if (task.retryCount === 0) {
      console.log(`${stamp()}  ✗ payment:capture   attempt 1 failed (gateway timeout), will retry`)
      throw new Error("gateway timeout")
    }
    console.log(`${stamp()}  ✓ payment:capture   succeeded on attempt ${task.retryCount + 1}`)
  })

// Middleware: runs around every handler, in the order added.
mux.use((next) => (task) => next(task).pipe(Effect.withSpan(`task ${task.type}`)))

/** What `effect-asynq worker examples/demo/handlers.ts` loads. */
export const handlers = mux
