/**
 * `npm start`: a worker with example handlers, and a client that enqueues a few tasks (immediate,
 * delayed, one that fails once then succeeds on retry). Prints each task as it is processed and
 * exits when all are done, or keeps running until Ctrl-C with --forever, with the web dashboard
 * beside the worker (http://127.0.0.1:8080/, or DASH_PORT; a free port when that one is taken).
 * Uses REDIS_URL (default redis://127.0.0.1:6379), or a private redis-server when none answers.
 */
import { type DashboardServer, serveDashboard } from "../../adapters/dashboard/nodeServer.js"
import { runWorker } from "../../adapters/worker/runWorker.js"
import { createClient } from "../../src/client.js"
import { mux } from "./handlers.js"
import { demoRedis } from "./privateRedis.js"

const forever = process.argv.includes("--forever")
const queue = "demo"

/** Ctrl-C / SIGTERM at any point: stop cleanly (the worker requeues what it holds, the private Redis is stopped). */
let signalled: NodeJS.Signals | undefined
const received = new Promise<NodeJS.Signals>((resolve) => {
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.on(sig, () => {
      if (signalled) {
        // A second one: stop waiting (process.exit still stops the private redis-server).
        console.log(`${sig} again: exiting now.`)
        process.exit(130)
      }
      signalled = sig
      resolve(sig)
    })
})

const main = async () => {
  const redis = await demoRedis()
  if (signalled) return redis.stop()
  console.log(
    redis.started
      ? `No Redis at ${process.env.REDIS_URL ?? "redis://127.0.0.1:6379"}: started a private redis-server at ${redis.url}`
      : `Using Redis at ${redis.url}`
  )

  const expected = new Set<string>()
  const completed = new Set<string>()
  let finish!: () => void
  const allDone = new Promise<void>((r) => (finish = r))
  const worker = await runWorker({
    redis: redis.url,
    handlers: mux,
    queues: { [queue]: 1 },
    concurrency: 4,
    retryDelay: () => 1000, // short, for the demo (asynq's default starts at 15 s)
    delayedTaskCheckIntervalMs: 500, // look for due delayed/retry tasks often, for the demo
    pollIntervalMs: 200,
    logLevel: "Warn",
    onSettled: (task, outcome) => {
      // A task can finish before its enqueue call has returned (idle workers wake at once).
      if (outcome === "completed") completed.add(task.id)
      if (expected.size > 0 && [...expected].every((id) => completed.has(id))) finish()
    }
  })
  console.log(`Worker ${worker.identity.serverId} running (queue "${queue}"); enqueueing example tasks…`)

  // --forever: the dashboard beside the worker (local only; actions allowed, it is a demo).
  let dashboard: DashboardServer | undefined
  if (forever) {
    const port = Number(process.env.DASH_PORT ?? 8080)
    const served = await serveDashboard({ redis: redis.url, port, allowActions: true }).catch(
      (e: NodeJS.ErrnoException) =>
        e.code === "EADDRINUSE" ? serveDashboard({ redis: redis.url, port: 0, allowActions: true }) : Promise.reject(e)
    )
    dashboard = served
    console.log(`Dashboard: ${served.url} (actions allowed)`)
  }

  const stop = async () => {
    await dashboard?.close()
    const requeued = await worker.shutdown()
    await redis.stop()
    console.log(`Worker stopped${requeued > 0 ? ` (${requeued} unfinished task(s) requeued)` : ""}.`)
  }
  if (signalled) return stop()

  const client = createClient({ url: redis.url })
  const tasks = [
    await client.enqueue("email:welcome", { to: "ada@example.com" }, { queue }),
    await client.enqueue("image:resize", { src: "cat.png", width: 320 }, { queue, retention: 60_000 }),
    await client.enqueue("report:daily", "scheduled 3 s ahead", { queue, processIn: 3000 }),
    await client.enqueue("payment:capture", { orderId: 42 }, { queue, maxRetry: 3 })
  ]
  for (const t of tasks) expected.add(t.id)
  if ([...expected].every((id) => completed.has(id))) finish()
  await client.close()

  if (forever) console.log("Running until Ctrl-C (--forever).")
  const outcome = await Promise.race([forever ? received : allDone.then(() => "done" as const), received])
  if (outcome === "done") console.log(`All ${tasks.length} tasks done.`)
  else console.log(`${outcome} received: shutting down.`)
  await stop()
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e)
    process.exit(1)
  }
)
