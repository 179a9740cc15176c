/** asynq's WorkerInfo: one task in progress, a field of `asynq:workers:{host:pid:id}` (keyed by task id). */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { decodeWith, type Mutable, readBytes, readString, writeBytes, writeInt32, writeString } from "./protoFields.js"
import { epoch, readTimestamp, type Timestamp, writeTimestamp } from "./Timestamp.js"

/** asynq's WorkerInfo protobuf message: a task a server is running, with its start and deadline. */
export interface WorkerInfo {
  /** 1 */ readonly host: string
  /** 2 */ readonly pid: number
  /** 3 */ readonly serverId: string
  /** 4 */ readonly taskId: string
  /** 5 */ readonly taskType: string
  /** 6: `undefined` is Go's nil (absent on the wire) */ readonly taskPayload: Uint8Array | undefined
  /** 7 */ readonly queue: string
  /** 8: when processing began */ readonly startTime: Timestamp
  /** 9: when the handler's context expires */ readonly deadline: Timestamp
}

/** Encodes a WorkerInfo as asynq's protobuf bytes. */
export const encodeWorkerInfo = (m: WorkerInfo): Uint8Array => {
  const w = new BinaryWriter()
  writeString(w, 1, m.host)
  writeInt32(w, 2, m.pid)
  writeString(w, 3, m.serverId)
  writeString(w, 4, m.taskId)
  writeString(w, 5, m.taskType)
  writeBytes(w, 6, m.taskPayload)
  writeString(w, 7, m.queue)
  writeTimestamp(w, 8, m.startTime)
  writeTimestamp(w, 9, m.deadline)
  return w.finish()
}

/** Decodes a WorkerInfo (Go rules: any order, unknown fields skipped, last wins). Throws MessageDecodeError. */
export const decodeWorkerInfo = (bytes: Uint8Array, key?: string): WorkerInfo =>
  decodeWith("WorkerInfo", bytes, key, (r) => {
    const m: Mutable<WorkerInfo> = {
      host: "",
      pid: 0,
      serverId: "",
      taskId: "",
      taskType: "",
      taskPayload: undefined,
      queue: "",
      startTime: epoch,
      deadline: epoch
    }
    while (r.pos < r.len) {
      const [no, wt] = r.tag()
      if (wt === WireType.LengthDelimited) {
        switch (no) {
          case 1:
            m.host = readString(r)
            continue
          case 3:
            m.serverId = readString(r)
            continue
          case 4:
            m.taskId = readString(r)
            continue
          case 5:
            m.taskType = readString(r)
            continue
          case 6:
            m.taskPayload = readBytes(r)
            continue
          case 7:
            m.queue = readString(r)
            continue
          case 8:
            m.startTime = readTimestamp(r, m.startTime)
            continue
          case 9:
            m.deadline = readTimestamp(r, m.deadline)
            continue
        }
      } else if (wt === WireType.Varint && no === 2) {
        m.pid = r.int32()
        continue
      }
      r.skip(wt, no)
    }
    return m
  })
