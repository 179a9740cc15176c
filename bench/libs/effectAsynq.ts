/**
 * effect-asynq adapter: the Promise client (src/client.ts, createClient; connected by `connect()`
 * before the scenarios, as the other adapters wait for their producer's ready) for enqueue — `enqueue`
 * one by one, `enqueueMany` for bulk (one round trip per batch) — and the processor's Server
 * (src/processor, Server.start) for processing, with a plain async handler for the task type.
 * Tasks are plain asynq tasks: type "bench", JSON payload, queue "bench", library defaults
 * (13-character ids, maxRetry 25, no retention: a processed task is deleted).
 * Delayed tasks: `processIn`; a retry: `maxRetry: 1` and the Server's `retryDelay`.
 * Flows ("workflow3"): effect-asynq/workflow's engine (`layer({ queue, concurrency })`, defaults
 * otherwise) running a workflow of three activities, started with `execute(…, { discard: true })`
 * from the same process's engine.
 * Logs below Warning are dropped so the server's start/stop lines do not mix into the output.
 */
import { Effect, Exit, Layer, ManagedRuntime, References, Schema, Scope } from "effect"
import { Activity, Workflow, type WorkflowEngine } from "effect/workflow"
import { Broker } from "../../src/broker/Broker.js"
import { createClient } from "../../src/client.js"
import { Server } from "../../src/processor/index.js"
import { Redis } from "../../src/redis/Redis.js"
import { Redis as IORedis } from "ioredis"
import type { HandlerInput } from "../../src/processor/Mux.js"
import type { ServerOptions } from "../../src/processor/options.js"
import { queueKeys } from "../../src/wire/keys.js"
import { layer as workflowEngine } from "../../src/workflow/index.js"
import {
  type AdapterFactory,
  type FlowRunner,
  flowSteps,
  type LibAdapter,
  type Payload,
  type WorkerHandle
} from "./types.js"

/** The "workflow3" workflow: three activities (step i of flow n returns n + i), their results summed at the end. */
const Flow3 = Workflow.make("Bench.Flow3", {
  payload: { n: Schema.Number },
  success: Schema.Number,
  idempotencyKey: ({ n }) => String(n)
})

const step = (n: number, i: number) =>
  Activity.make({ name: `step${i}`, success: Schema.Number, execute: Effect.succeed(n + i) })

/** The "workflow3" flows on control queue prefix `queue`: one runtime (engine + the registered workflow) per started worker. */
const flowsOf = (redisUrl: string, queue: string): FlowRunner => {
  let runtime: ManagedRuntime.ManagedRuntime<WorkflowEngine.WorkflowEngine, unknown> | undefined
  return {
    settings:
      "effect-asynq/workflow layer({ queue, concurrency }) (defaults otherwise), a workflow of 3 activities registered with Workflow.toLayer; execute(…, { discard: true }) from the same engine",
    startWorker: async (concurrency, onDone) => {
      const engine = workflowEngine({ queue, concurrency }).pipe(
        Layer.provide(Broker.layer),
        Layer.provide(Redis.layer({ url: redisUrl }))
      )
      const registered = Flow3.toLayer(({ n }) =>
        Effect.gen(function* () {
          let value = 0
          for (const i of flowSteps) value += yield* step(n, i)
          yield* Effect.sync(() => onDone(n, value))
          return value
        })
      )
      const rt = ManagedRuntime.make(
        registered.pipe(Layer.provideMerge(engine), Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")))
      )
      await rt.runPromise(Effect.void)
      runtime = rt
      return {
        stop: async () => {
          runtime = undefined
          await rt.dispose()
        }
      }
    },
    addFlow: async (n) => {
      if (runtime === undefined)
        throw new Error("effect-asynq flows: start the worker first (its engine starts the flows)")
      await runtime.runPromise(Flow3.execute({ n }, { discard: true }))
    },
    close: async () => {}
  }
}

/** A Server on its own connection, started in a scope that `stop` closes (graceful shutdown, then the connections). */
const startServer = async (redisUrl: string, handlers: HandlerInput, options: ServerOptions): Promise<WorkerHandle> => {
  const scope = await Effect.runPromise(Scope.make())
  const layer = Broker.layer.pipe(Layer.provide(Redis.layer({ url: redisUrl })))
  try {
    await Effect.runPromise(
      Effect.gen(function* () {
        const context = yield* Layer.buildWithScope(layer, scope)
        yield* Server.start(handlers, options).pipe(Scope.provide(scope), Effect.provideContext(context))
      }).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))
    )
  } catch (e) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw e
  }
  return {
    // Closing the scope runs the server's graceful shutdown, then quits its connections.
    stop: () =>
      Effect.runPromise(Scope.close(scope, Exit.void).pipe(Effect.provideService(References.MinimumLogLevel, "Warn")))
  }
}

export const make: AdapterFactory = async ({ redisUrl, queue }) => {
  const client = createClient({ url: redisUrl })
  // Connected before the scenarios start, as the other adapters are (bee-queue's ready(), BullMQ's waitUntilReady()).
  await client.connect()
  const opts = { queue }
  const admin = new IORedis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true })
  admin.on("error", () => {})
  const adapter: LibAdapter = {
    name: "effect-asynq",
    settings:
      "createClient (connect() before the scenarios): enqueue / enqueueMany; Server.start({ bench: handler }, { concurrency, queues: { bench: 1 } }) with all other options at their defaults",
    enqueueOne: async (payload) => {
      await client.enqueue("bench", payload, opts)
    },
    enqueueBulk: async (payloads) => {
      const out = await client.enqueueMany(payloads.map((payload) => ({ type: "bench", payload, options: opts })))
      const failed = out.filter((o) => !o.ok).length
      if (failed > 0) throw new Error(`effect-asynq enqueueMany: ${failed} tasks failed`)
    },
    startWorker: (concurrency, handler) =>
      startServer(
        redisUrl,
        { bench: (task) => void handler(task.json<Payload>()) },
        { concurrency, queues: { [queue]: 1 } }
      ),
    enqueueDelayed: async (payload, delayMs) => {
      await client.enqueue("bench", payload, { queue, processIn: delayMs })
    },
    enqueueDelayedBulk: async (payloads, delayMs) => {
      const out = await client.enqueueMany(
        payloads.map((payload) => ({ type: "bench", payload, options: { queue, processIn: delayMs } }))
      )
      const failed = out.filter((o) => !o.ok)
      if (failed.length > 0)
        throw new Error(
          `effect-asynq enqueueMany (delayed): ${failed.length} tasks failed, e.g. ${JSON.stringify(failed[0])}`
        )
    },
    enqueueRetried: async (payload) => {
      await client.enqueue("bench", payload, { queue, maxRetry: 1 })
    },
    startDelayedWorker: (concurrency, handler, { retryDelayMs }) =>
      startServer(
        redisUrl,
        { bench: (task) => void handler(task.json<Payload>(), task.retryCount) },
        { concurrency, queues: { [queue]: 1 }, retryDelay: () => retryDelayMs }
      ),
    readyCount: () => admin.llen(queueKeys(queue).pending),
    flows: async () => flowsOf(redisUrl, `${queue}-flows`),
    close: async () => {
      admin.disconnect()
      await client.close()
    }
  }
  return adapter
}
