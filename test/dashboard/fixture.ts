/**
 * Real queue data for the dashboard tests, made by the real client, steps, worker and scheduler (no
 * hand-written keys): queue "default" with a task in every state, 25 pending tasks (two pages of 20),
 * a traceparent header, a result; queue "low" paused; queue "slow" with a task a running worker holds
 * (a live server with an active worker); a scheduler entry that has enqueued at least once.
 */
import { type Effect, ManagedRuntime } from "effect"
import { createClient } from "../../src/client.js"
import { brokerLayer } from "../../src/runtime/promiseRuntime.js"
import { archive, complete, dequeueLease, retry, writeResult } from "../../src/steps/index.js"
import { pauseQueue } from "../../src/inspector/control.js"
import { schedulerEntries, schedulerHistory } from "../../src/inspector/scheduler.js"
import { servers } from "../../src/inspector/servers.js"
import { createScheduler } from "../../src/scheduler/promise.js"
import { runWorker } from "../../adapters/worker/runWorker.js"
import { waitFor } from "../support/waitFor.js"

export const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
export const traceparent = `00-${traceId}-00f067aa0ba902b7-01`

export interface DashboardData {
  readonly ids: {
    readonly traced: string
    readonly scheduled: string
    readonly retry: string
    readonly archived: string
    readonly completed: string
    readonly active: string
    readonly slow: string
  }
  readonly entryId: string
  readonly close: () => Promise<void>
}

export const arrangeDashboardData = async (url: string): Promise<DashboardData> => {
  const rt = ManagedRuntime.make(brokerLayer(url))
  const run = <A, E>(eff: Effect.Effect<A, E, import("../../src/broker/Broker.js").Broker>) => rt.runPromise(eff)
  const client = createClient({ url })
  const take = () =>
    run(dequeueLease({ queues: ["default"], count: 1, leaseMs: 3_600_000 })).then((r) => r.tasks[0]!.msg)

  // Each task goes through the real steps, one at a time (the dequeue takes the oldest pending).
  const retryInfo = await client.enqueue("payment:capture", { orderId: 7 }, { queue: "default", maxRetry: 3 })
  await run(retry(await take(), { retryAtMs: Date.now() + 3_600_000, errorMsg: "card declined", isFailure: true }))
  const archivedInfo = await client.enqueue("image:resize", { src: "cat.png" }, { queue: "default", maxRetry: 0 })
  await run(archive(await take(), { errorMsg: "corrupt image" }))
  const completedInfo = await client.enqueue(
    "report:daily",
    { day: "2026-11-24" },
    { queue: "default", retention: 3_600_000 }
  )
  const completedMsg = await take()
  await run(writeResult({ queue: "default", id: completedMsg.id, result: new TextEncoder().encode('{"rows":42}') }))
  await run(complete(completedMsg))
  const activeInfo = await client.enqueue("video:encode", { file: "a.mp4" }, { queue: "default" })
  await take()

  const traced = await client.enqueue(
    "email:send",
    { to: "ada@example.com" },
    { queue: "default", headers: { traceparent, "x-tenant": "acme" } }
  )
  for (let i = 0; i < 24; i++) await client.enqueue("email:send", { to: `user${i}@example.com` }, { queue: "default" })
  const scheduled = await client.enqueue("reminder:send", "in an hour", { queue: "default", processIn: 3_600_000 })
  await client.enqueue("digest:item", { n: 1 }, { queue: "default", group: "digest-42" })
  await client.enqueue("digest:item", { n: 2 }, { queue: "default", group: "digest-42" })
  await client.enqueue("cleanup", null, { queue: "low" })
  await run(pauseQueue("low"))

  // A live server holding one task of queue "slow" until the fixture is closed.
  let release!: () => void
  const released = new Promise<void>((r) => (release = r))
  const worker = await runWorker({
    redis: url,
    queues: { slow: 1 },
    concurrency: 2,
    logLevel: "Error",
    handlers: { "slow:job": () => released }
  })
  const slow = await client.enqueue("slow:job", { step: 1 }, { queue: "slow" })
  await waitFor(
    "the worker's active worker entry",
    () => run(servers()),
    (list) => list.some((s) => s.activeWorkers.some((w) => w.taskId === slow.id)),
    { timeoutMs: 20_000 }
  )

  // A scheduler whose entry enqueues every second (into queue "cron"), until it has done so once.
  const scheduler = createScheduler({ redis: { url } })
  const entryId = await scheduler.register({
    spec: "@every 1s",
    type: "cron:tick",
    payload: { source: "scheduler" },
    options: { queue: "cron" }
  })
  await scheduler.start()
  await waitFor(
    "the scheduler entry's first enqueue",
    () => run(schedulerHistory(entryId)),
    (events) => events.length > 0,
    { timeoutMs: 20_000 }
  )
  await waitFor(
    "the published scheduler entry",
    () => run(schedulerEntries()),
    (entries) => entries.some((e) => e.id === entryId)
  )
  await client.close()

  return {
    ids: {
      traced: traced.id,
      scheduled: scheduled.id,
      retry: retryInfo.id,
      archived: archivedInfo.id,
      completed: completedInfo.id,
      active: activeInfo.id,
      slow: slow.id
    },
    entryId,
    close: async () => {
      await scheduler.shutdown()
      release()
      await worker.shutdown()
      await rt.dispose()
    }
  }
}
