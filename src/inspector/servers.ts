import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { readServerStates } from "../broker/servers.js"
import { decodeServerInfo } from "../wire/ServerInfo.js"
import { timestampToDate } from "../wire/Timestamp.js"
import { decodeWorkerInfo, type WorkerInfo } from "../wire/WorkerInfo.js"
import type { ServerDetails, WorkerDetails } from "./serverTypes.js"

/** Decodes, or leaves out what is not decodable (a stale or foreign entry must not hide the others). */
const tryDecode = <A>(f: () => A): ReadonlyArray<A> => {
  try {
    return [f()]
  } catch {
    return []
  }
}

const toWorker = (w: WorkerInfo): WorkerDetails => ({
  taskId: w.taskId,
  taskType: w.taskType,
  taskPayload: w.taskPayload,
  queue: w.queue,
  started: timestampToDate(w.startTime),
  deadline: timestampToDate(w.deadline)
})

/**
 * Running servers (Go asynq's or ours) with their active workers (asynq's Servers): the entries
 * of asynq:servers / asynq:workers whose heartbeat expiry has not passed. Read-only.
 */
export const servers = Effect.fn("Inspector.servers")(function* () {
  const nowSec = Math.floor((yield* Clock.currentTimeMillis) / 1000)
  const state = yield* readServerStates(nowSec)
  const workers = state.workers.flatMap((b) => tryDecode(() => decodeWorkerInfo(b)))
  const out: Array<ServerDetails> = []
  for (const { key: k, bytes: b } of state.servers) {
    if (b === null) continue
    for (const s of tryDecode(() => decodeServerInfo(b, k))) {
      out.push({
        id: `${s.host}:${s.pid}:${s.serverId}`,
        host: s.host,
        pid: s.pid,
        serverId: s.serverId,
        concurrency: s.concurrency,
        queues: s.queues,
        strictPriority: s.strictPriority,
        status: s.status,
        started: timestampToDate(s.startTime),
        activeWorkers: workers
          .filter((w) => w.host === s.host && w.pid === s.pid && w.serverId === s.serverId)
          .map(toWorker)
      })
    }
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
})
