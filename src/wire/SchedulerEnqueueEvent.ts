/** asynq's SchedulerEnqueueEvent: a member of the zset `asynq:scheduler_history:<entryId>`. */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { decodeWith, type Mutable, readString, writeString } from "./protoFields.js"
import { epoch, readTimestamp, type Timestamp, writeTimestamp } from "./Timestamp.js"

/** asynq's SchedulerEnqueueEvent protobuf message: a task a scheduler entry enqueued, and when. */
export interface SchedulerEnqueueEvent {
  /** 1: id of the task the scheduler enqueued */ readonly taskId: string
  /** 2 */ readonly enqueueTime: Timestamp
}

/** Encodes a SchedulerEnqueueEvent as asynq's protobuf bytes. */
export const encodeSchedulerEnqueueEvent = (m: SchedulerEnqueueEvent): Uint8Array => {
  const w = new BinaryWriter()
  writeString(w, 1, m.taskId)
  writeTimestamp(w, 2, m.enqueueTime)
  return w.finish()
}

/** Decodes a SchedulerEnqueueEvent (Go rules: any order, unknown fields skipped, last wins). Throws MessageDecodeError. */
export const decodeSchedulerEnqueueEvent = (bytes: Uint8Array, key?: string): SchedulerEnqueueEvent =>
  decodeWith("SchedulerEnqueueEvent", bytes, key, (r) => {
    const m: Mutable<SchedulerEnqueueEvent> = { taskId: "", enqueueTime: epoch }
    while (r.pos < r.len) {
      const [no, wt] = r.tag()
      if (wt === WireType.LengthDelimited) {
        switch (no) {
          case 1:
            m.taskId = readString(r)
            continue
          case 2:
            m.enqueueTime = readTimestamp(r, m.enqueueTime)
            continue
        }
      }
      r.skip(wt, no)
    }
    return m
  })
