/**
 * BullMQ adapter, configured as its docs recommend for throughput: `Queue.add` / `Queue.addBulk`,
 * one `Worker` with `concurrency`, and completed jobs removed (`removeOnComplete: { count: 0 }`),
 * which is what asynq does by default (a processed task is deleted unless it has a retention).
 * Delayed jobs: `add(…, { delay })`; a retry: `{ attempts: 2, backoff: { type: "fixed", delay } }`.
 * Flows ("workflow3"): `FlowProducer.add` of a parent with three children on one queue, one `Worker`
 * (same options) for both; the parent, run once its children completed, reads their results with
 * `getChildrenValues()`.
 */
import { FlowProducer, Queue, Worker } from "bullmq"
import { type AdapterFactory, type FlowRunner, flowSteps, type LibAdapter, type Payload } from "./types.js"

/** The "workflow3" flows: a parent job with three children (step i of flow n returns n + i), on queue `queue`. */
const flowsOf = async (connection: { host: string; port: number }, queue: string): Promise<FlowRunner> => {
  const flows = new FlowProducer({ connection })
  flows.on("error", () => {})
  await flows.waitUntilReady()
  return {
    settings:
      "FlowProducer.add({ parent, children: 3 jobs }) on one queue; one Worker({ concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } }) runs children and parents; the parent reads getChildrenValues()",
    startWorker: async (concurrency, onDone) => {
      const worker = new Worker<{ n: number; i?: number }>(
        queue,
        async (job) => {
          if (job.name !== "parent") return job.data.n + job.data.i!
          const values = Object.values(await job.getChildrenValues<number>())
          onDone(
            job.data.n,
            values.reduce((a, b) => a + b, 0)
          )
          return undefined
        },
        { connection, concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } }
      )
      worker.on("error", (e) => console.error("bench bullmq flow worker error:", e))
      await worker.waitUntilReady()
      return { stop: () => worker.close() }
    },
    addFlow: async (n) => {
      await flows.add({
        name: "parent",
        queueName: queue,
        data: { n },
        children: flowSteps.map((i) => ({ name: `step${i}`, queueName: queue, data: { n, i } }))
      })
    },
    close: () => flows.close()
  }
}

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
    settings:
      "Queue.add / Queue.addBulk; Worker({ concurrency, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } })",
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
    flows: () => flowsOf(connection, `${queue}-flows`),
    close: () => producer.close()
  }
  return adapter
}
