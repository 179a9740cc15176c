/**
 * bee-queue adapter, configured as its README recommends for throughput: a producer-only Queue
 * (`isWorker: false`, no events, no job map), `createJob().save()` one by one, `saveAll` for bulk
 * (one pipelined request), and a worker Queue with `process(concurrency, handler)` that removes
 * succeeded jobs (`removeOnSuccess`, as asynq deletes processed tasks) and sends no events
 * (asynq publishes none either).
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
      const worker = new BeeQueue<Payload>(queue, {
        redis: { url: redisUrl },
        isWorker: true,
        getEvents: false,
        sendEvents: false,
        storeJobs: false,
        removeOnSuccess: true,
        removeOnFailure: true
      })
      worker.on("error", (e) => console.error("bench bee-queue worker error:", e))
      await worker.ready()
      worker.process(concurrency, async (job) => {
        handler(job.data)
      })
      return { stop: () => worker.close(10_000) }
    },
    close: () => producer.close(10_000)
  }
  return adapter
}
