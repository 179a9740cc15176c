/**
 * Server and worker state, written as asynq's heartbeater does so asynq's CLI and web UI list this
 * server: every `heartbeatIntervalMs`, the ServerInfo at asynq:servers:{host:pid:id} and one
 * WorkerInfo per running task in the hash asynq:workers:{host:pid:id}, both with a TTL of twice
 * the interval, and both keys in the asynq:servers / asynq:workers zsets scored by their expiry.
 * Removed at shutdown.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ServerStateStore from "../broker/servers.js"
import { serverInfoKey, workersKey } from "../wire/keys.js"
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
  const workers: Array<{ taskId: string; info: Uint8Array }> = []
  for (const t of registry.tasks.values()) {
    workers.push({
      taskId: t.msg.id,
      info: encodeWorkerInfo({
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
    })
  }
  yield* ServerStateStore.saveServerState(keys, info, workers, ttlSec, expSec)
})

/** Removes the server's state (asynq's ClearServerState). */
export const clearServerState = Effect.fn("Processor.clearServerState")(function* (id: ServerIdentity) {
  yield* ServerStateStore.deleteServerState(serverKeys(id))
})

export const serverStateLoop = (
  id: ServerIdentity,
  options: ResolvedOptions,
  registry: Registry,
  status: () => "active" | "stopped"
) =>
  writeServerState(id, options, registry, status()).pipe(
    Effect.tapError((e) => Effect.logWarning(`writing server state failed: ${e.message}`)),
    Effect.ignore,
    Effect.andThen(Effect.sleep(Duration.millis(options.heartbeatIntervalMs))),
    Effect.forever
  )
