/** vectors.json `fields` objects (proto names, int64 as strings, bytes as base64) → our TS message types. */
import type { SchedulerEnqueueEvent } from "../../src/wire/SchedulerEnqueueEvent.js"
import type { SchedulerEntry } from "../../src/wire/SchedulerEntry.js"
import type { ServerInfo } from "../../src/wire/ServerInfo.js"
import type { TaskMessage } from "../../src/wire/TaskMessage.js"
import type { Timestamp } from "../../src/wire/Timestamp.js"
import type { WorkerInfo } from "../../src/wire/WorkerInfo.js"
import { fromB64, loadFixture } from "../support/fixtures.js"

type F = Record<string, any>

export interface Vector {
  readonly name: string
  readonly description: string
  readonly fields: F
  readonly hex: string
  readonly byte_length: number
}
export interface DecodeVector {
  readonly name: string
  readonly message: "TaskMessage" | "ServerInfo"
  readonly description: string
  readonly hex: string
  readonly decoded?: F
  readonly go_remarshal_hex?: string
  readonly asynq_roundtrip_hex?: string
  readonly go_error?: string
}
export interface Vectors {
  readonly task_message: ReadonlyArray<Vector>
  readonly server_info: ReadonlyArray<Vector>
  readonly worker_info: ReadonlyArray<Vector>
  readonly scheduler_entry: ReadonlyArray<Vector>
  readonly scheduler_enqueue_event: ReadonlyArray<Vector>
  readonly decode_vectors: ReadonlyArray<DecodeVector>
  readonly option_strings: ReadonlyArray<{ readonly go: string; readonly string: string }>
}

export const vectors = (): Vectors => loadFixture<Vectors>("vectors.json")

const ts = (t: F): Timestamp => ({ seconds: Number(t.seconds), nanos: t.nanos })

/** As written (an empty, non-nil payload stays an empty Uint8Array). */
export const taskMessage = (f: F): TaskMessage => ({
  type: f.type,
  payload: fromB64(f.payload),
  id: f.id,
  queue: f.queue,
  retry: f.retry,
  retried: f.retried,
  errorMsg: f.error_msg,
  timeout: Number(f.timeout),
  deadline: Number(f.deadline),
  uniqueKey: f.unique_key,
  lastFailedAt: Number(f.last_failed_at),
  retention: Number(f.retention),
  completedAt: Number(f.completed_at),
  groupKey: f.group_key,
  headers: f.headers
})

/** What a decoder gives back: an empty payload is nil, as in Go's proto.Unmarshal. */
export const asDecoded = <M extends object>(m: M): M => {
  const out = { ...m } as Record<string, unknown>
  for (const k of ["payload", "taskPayload"])
    if (out[k] instanceof Uint8Array && (out[k] as Uint8Array).length === 0) out[k] = undefined
  return out as M
}

export const serverInfo = (f: F): ServerInfo => ({
  host: f.host,
  pid: f.pid,
  serverId: f.server_id,
  concurrency: f.concurrency,
  queues: f.queues,
  strictPriority: f.strict_priority,
  status: f.status,
  startTime: ts(f.start_time),
  activeWorkerCount: f.active_worker_count
})

export const workerInfo = (f: F): WorkerInfo => ({
  host: f.host,
  pid: f.pid,
  serverId: f.server_id,
  taskId: f.task_id,
  taskType: f.task_type,
  taskPayload: fromB64(f.task_payload),
  queue: f.queue,
  startTime: ts(f.start_time),
  deadline: ts(f.deadline)
})

export const schedulerEntry = (f: F): SchedulerEntry => ({
  id: f.id,
  spec: f.spec,
  taskType: f.task_type,
  taskPayload: fromB64(f.task_payload),
  enqueueOptions: f.enqueue_options,
  nextEnqueueTime: ts(f.next_enqueue_time),
  prevEnqueueTime: ts(f.prev_enqueue_time)
})

export const schedulerEnqueueEvent = (f: F): SchedulerEnqueueEvent => ({
  taskId: f.task_id,
  enqueueTime: ts(f.enqueue_time)
})
