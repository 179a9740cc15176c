/**
 * Server and worker state, written as asynq's heartbeater does so asynq's CLI and web UI list this
 * server: every `heartbeatIntervalMs`, the ServerInfo at asynq:servers:{host:pid:id} and one
 * WorkerInfo per running task in the hash asynq:workers:{host:pid:id}, both with a TTL of twice
 * the interval, and both keys in the asynq:servers / asynq:workers zsets scored by their expiry.
 * Removed at shutdown.
 */
import { Clock, Duration, Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { bytesArg } from "../broker/args.js"
import { allServers, allWorkers, serverInfoKey, workersKey } from "../wire/keys.js"
import { encodeServerInfo } from "../wire/ServerInfo.js"
import { timestampFromMillis } from "../wire/Timestamp.js"
import { encodeWorkerInfo } from "../wire/WorkerInfo.js"
import type { ResolvedOptions } from "./options.js"
import type { Registry } from "./registry.js"

export interface ServerIdentity {
  readonly host: string
  readonly pid: number
  readonly serverId: string
  readonly startedAtMs: number
}

export const serverKeys = (id: ServerIdentity) => ({
  server: serverInfoKey(id.host, id.pid, id.serverId),
  workers: workersKey(id.host, id.pid, id.serverId)
})

/** One write of the server's state (3 script calls: the two keys, then each listing zset). */
export const writeServerState = Effect.fn("Processor.writeServerState")(function* (
  id: ServerIdentity,
  options: ResolvedOptions,
  registry: Registry,
  status: "active" | "stopped"
) {
  const { redis } = yield* Broker
  const now = yield* Clock.currentTimeMillis
  const ttlSec = Math.max(1, Math.ceil((options.heartbeatIntervalMs * 2) / 1000))
  const expSec = Math.floor(now / 1000) + ttlSec
  const keys = serverKeys(id)
  const info = encodeServerInfo({
    host: id.host,
    pid: id.pid,
    serverId: id.serverId,
    concurrency: options.concurrency,
    queues: options.queues,
    strictPriority: options.strictPriority,
    status,
    startTime: timestampFromMillis(id.startedAtMs),
    activeWorkerCount: registry.tasks.size
  })
  const workerArgs: Array<string | Buffer> = []
  for (const t of registry.tasks.values()) {
    workerArgs.push(
      t.msg.id,
      bytesArg(
        encodeWorkerInfo({
          host: id.host,
          pid: id.pid,
          serverId: id.serverId,
          taskId: t.msg.id,
          taskType: t.msg.type,
          taskPayload: t.msg.payload,
          queue: t.msg.queue,
          startTime: timestampFromMillis(t.startedAtMs),
          deadline: timestampFromMillis(t.deadlineMs)
        })
      )
    )
  }
  yield* redis.script("serverIndex", [allServers], ["add", keys.server, expSec])
  yield* redis.script("serverIndex", [allWorkers], ["add", keys.workers, expSec])
  yield* redis.script("serverStateWrite", [keys.server, keys.workers], [ttlSec, bytesArg(info), ...workerArgs])
})

/** Removes the server's state (asynq's ClearServerState). */
export const clearServerState = Effect.fn("Processor.clearServerState")(function* (id: ServerIdentity) {
  const { redis } = yield* Broker
  const keys = serverKeys(id)
  yield* redis.script("serverIndex", [allServers], ["remove", keys.server])
  yield* redis.script("serverIndex", [allWorkers], ["remove", keys.workers])
  yield* redis.script("serverStateClear", [keys.server, keys.workers], [])
})

export const serverStateLoop = (id: ServerIdentity, options: ResolvedOptions, registry: Registry, status: () => "active" | "stopped") =>
  writeServerState(id, options, registry, status()).pipe(
    Effect.tapError((e) => Effect.logWarning(`writing server state failed: ${e.message}`)),
    Effect.ignore,
    Effect.andThen(Effect.sleep(Duration.millis(options.heartbeatIntervalMs))),
    Effect.forever
  )
