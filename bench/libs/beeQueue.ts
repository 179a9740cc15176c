/**
 * bee-queue adapter, configured as its README recommends for throughput: a producer-only Queue
 * (`isWorker: false`, no events, no job map), `createJob().save()` one by one, `saveAll` for bulk
 * (one pipelined request), and a worker Queue with `process(concurrency, handler)` that removes
 * succeeded jobs (`removeOnSuccess`, as asynq deletes processed tasks) and sends no events
 * (asynq publishes none either). Delayed jobs: `delayUntil`, run by a worker Queue with
 * `activateDelayedJobs: true` (bee-queue runs none otherwise); a retry: `retries(1).backoff("fixed", delay)`.
 */
import BeeQueue from "bee-queue"
import type { AdapterFactory, LibAdapter, Payload } from "./types.js"

export const make: AdapterFactory = async ({ redisUrl, queue }) => {
  const producer = new BeeQueue<Payload>(queue, {
    redis: { url: redisUrl },
    isWorker: false,
    getEvents: false,
    sendEvents: false,
    storeJobs: false
  })
  producer.on("error", () => {})
  await producer.ready()
  /** A worker with the settings of every scenario (`extra` adds to them), ready. */
  const openWorker = async (extra: { readonly activateDelayedJobs?: boolean }) => {
    const worker = new BeeQueue<Payload>(queue, {
      redis: { url: redisUrl },
      isWorker: true,
      getEvents: false,
      sendEvents: false,
      storeJobs: false,
      removeOnSuccess: true,
      removeOnFailure: true,
      ...extra
    })
    worker.on("error", (e) => console.error("bench bee-queue worker error:", e))
    await worker.ready()
    return worker
  }
  const adapter: LibAdapter = {
    name: "bee-queue",
    settings:
      "producer { isWorker: false, getEvents: false, sendEvents: false, storeJobs: false }: createJob().save() / saveAll; " +
      "worker { getEvents: false, sendEvents: false, storeJobs: false, removeOnSuccess: true }: process(concurrency)",
    enqueueOne: async (payload) => {
      await producer.createJob(payload).save()
    },
    enqueueBulk: async (payloads) => {
      const errors = await producer.saveAll(payloads.map((p) => producer.createJob(p)))
      if (errors.size > 0) throw new Error(`bee-queue saveAll: ${errors.size} jobs failed`)
    },
    startWorker: async (concurrency, handler) => {
      const worker = await openWorker({})
      worker.process(concurrency, async (job) => {
        handler(job.data)
      })
      return { stop: () => worker.close(10_000) }
    },
    enqueueDelayed: async (payload, delayMs) => {
      await producer
        .createJob(payload)
        .delayUntil(Date.now() + delayMs)
        .save()
    },
    enqueueDelayedBulk: async (payloads, delayMs) => {
      const at = Date.now() + delayMs
      const errors = await producer.saveAll(payloads.map((p) => producer.createJob(p).delayUntil(at)))
      if (errors.size > 0) throw new Error(`bee-queue saveAll (delayed): ${errors.size} jobs failed`)
    },
    enqueueRetried: async (payload, retryDelayMs) => {
      await producer.createJob(payload).retries(1).backoff("fixed", retryDelayMs).save()
    },
    startDelayedWorker: async (concurrency, handler) => {
      // Delayed jobs and backoff retries run only where this is on (bee-queue's README); the
      // other delay settings (delayedDebounce 1000 ms, nearTermWindow 20 min) keep their defaults.
      const worker = await openWorker({ activateDelayedJobs: true })
      worker.process(concurrency, async (job) => {
        // bee-queue counts retries down: options.retries is what is left.
        handler(job.data, 1 - (job.options.retries ?? 0))
      })
      return { stop: () => worker.close(10_000) }
    },
    readyCount: async () => (await producer.checkHealth()).waiting,
    close: () => producer.close(10_000)
  }
  return adapter
}
