/**
 * Server and worker state as asynq's heartbeater writes it (asynq:servers:{…}, asynq:workers:{…}
 * and their listing zsets), and the inspector's read of it.
 */
import * as Effect from "effect/Effect"
import { allServers, allWorkers } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { bytesArg } from "./args.js"
import { serverIndexLua, serverStateClearLua, serverStateWriteLua } from "../redis/lua.generated.js"
import { registerLua } from "../redis/scripts.js"

// Run by name below (three plain calls, no reply decoding): their sources are registered here.
registerLua("serverIndex", serverIndexLua)
registerLua("serverStateWrite", serverStateWriteLua)
registerLua("serverStateClear", serverStateClearLua)

export interface ServerStateKeys {
  readonly server: string
  readonly workers: string
}

/** Writes the server's info and worker entries (TTL `ttlSec`) and lists both keys until `expiresAtSec`. */
export const saveServerState = Effect.fn("Broker.saveServerState")(function* (
  keys: ServerStateKeys,
  info: Uint8Array,
  workers: ReadonlyArray<{ readonly taskId: string; readonly info: Uint8Array }>,
  ttlSec: number,
  expiresAtSec: number
) {
  const { redis } = yield* Broker
  const workerArgs: Array<string | Uint8Array> = []
  for (const w of workers) workerArgs.push(w.taskId, bytesArg(w.info))
  yield* redis.script("serverIndex", [allServers], ["add", keys.server, expiresAtSec])
  yield* redis.script("serverIndex", [allWorkers], ["add", keys.workers, expiresAtSec])
  yield* redis.script("serverStateWrite", [keys.server, keys.workers], [ttlSec, bytesArg(info), ...workerArgs])
})

/** Removes the server's state (asynq's ClearServerState). */
export const deleteServerState = Effect.fn("Broker.deleteServerState")(function* (keys: ServerStateKeys) {
  const { redis } = yield* Broker
  yield* redis.script("serverIndex", [allServers], ["remove", keys.server])
  yield* redis.script("serverIndex", [allWorkers], ["remove", keys.workers])
  yield* redis.script("serverStateClear", [keys.server, keys.workers], [])
})

/** The listed servers not expired at `nowSec`: each server key with its ServerInfo bytes (null when gone), and the WorkerInfo bytes of all their workers. */
export const readServerStates = Effect.fn("Broker.readServerStates")(function* (nowSec: number) {
  const { redis } = yield* Broker
  const serverKeys = yield* redis.use("zrangebyscore asynq:servers", (c) => c.zrangebyscore(allServers, nowSec, "+inf"))
  const workerKeys = yield* redis.use("zrangebyscore asynq:workers", (c) => c.zrangebyscore(allWorkers, nowSec, "+inf"))
  const servers = yield* redis.use("get server info", (c) =>
    Promise.all(serverKeys.map((k) => c.getBuffer(k).then((b) => ({ key: k, bytes: b }))))
  )
  const workerValues = yield* redis.use("hvals workers", (c) => Promise.all(workerKeys.map((k) => c.hvalsBuffer(k))))
  return { servers, workers: workerValues.flat() }
})
