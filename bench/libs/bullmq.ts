/**
 * BullMQ adapter, configured as its docs recommend for throughput: `Queue.add` / `Queue.addBulk`,
 * one `Worker` with `concurrency`, and completed jobs removed (`removeOnComplete: { count: 0 }`),
 * which is what asynq does by default (a processed task is deleted unless it has a retention).
 * Delayed jobs: `add(…, { delay })`; a retry: `{ attempts: 2, backoff: { type: "fixed", delay } }`.
 */
import { Queue, Worker } from "bullmq"
import type { AdapterFactory, LibAdapter, Payload } from "./types.js"

const connectionOf = (url: string) => {
  const u = new URL(url)
  return { host: u.hostname, port: Number(u.port || 6379) }
}

export const make: AdapterFactory = async ({ redisUrl, queue }) => {
  const connection = connectionOf(redisUrl)
  const producer = new Queue<Payload>(queue, { connection })
  producer.on("error", () => {})
  await producer.waitUntilReady()
  const adapter: LibAdapter = {
    name: "bullmq",
    settings: "Queue.add / Queue.addBulk; Worker({ concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } })",
    enqueueOne: async (payload) => {
      await producer.add("bench", payload)
    },
    enqueueBulk: async (payloads) => {
      await producer.addBulk(payloads.map((data) => ({ name: "bench", data })))
    },
    startWorker: async (concurrency, handler) => {
      const worker = new Worker<Payload>(
        queue,
        async (job) => {
          handler(job.data)
        },
        { connection, concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } }
      )
      worker.on("error", (e) => console.error("bench bullmq worker error:", e))
      await worker.waitUntilReady()
      return { stop: () => worker.close() }
    },
    enqueueDelayed: async (payload, delayMs) => {
      await producer.add("bench", payload, { delay: delayMs })
    },
    enqueueDelayedBulk: async (payloads, delayMs) => {
      await producer.addBulk(payloads.map((data) => ({ name: "bench", data, opts: { delay: delayMs } })))
    },
    enqueueRetried: async (payload, retryDelayMs) => {
      await producer.add("bench", payload, { attempts: 2, backoff: { type: "fixed", delay: retryDelayMs } })
    },
    startDelayedWorker: async (concurrency, handler) => {
      const worker = new Worker<Payload>(
        queue,
        async (job) => {
          handler(job.data, job.attemptsMade)
        },
        { connection, concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } }
      )
      worker.on("error", (e) => console.error("bench bullmq worker error:", e))
      await worker.waitUntilReady()
      return { stop: () => worker.close() }
    },
    readyCount: () => producer.getWaitingCount(),
    close: () => producer.close()
  }
  return adapter
}
