import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { MessageDecodeError } from "./errors.js"
import {
  decodeWith,
  type Mutable,
  readBytes,
  readInt64,
  readMapEntry,
  setEntry,
  readString,
  toInt64,
  writeBytes,
  writeInt32,
  writeInt64,
  writeString,
  writeStringMap
} from "./protoFields.js"

export { MessageDecodeError }

/**
 * asynq's TaskMessage (asynq.proto), field for field. int64 fields are JS numbers: asynq stores
 * unix seconds and second counts, far inside ±2^53; values outside that range lose precision.
 */
export interface TaskMessage {
  /** 1 */ readonly type: string
  /** 2: `undefined` is Go's nil payload (absent on the wire). */ readonly payload: Uint8Array | undefined
  /** 3 */ readonly id: string
  /** 4 */ readonly queue: string
  /** 5: max retry count */ readonly retry: number
  /** 6 */ readonly retried: number
  /** 7 */ readonly errorMsg: string
  /** 8: seconds, 0 = none */ readonly timeout: number
  /** 9: unix seconds, 0 = none */ readonly deadline: number
  /** 10 */ readonly uniqueKey: string
  /** 11: unix seconds */ readonly lastFailedAt: number
  /** 12: seconds */ readonly retention: number
  /** 13: unix seconds */ readonly completedAt: number
  /** 14 */ readonly groupKey: string
  /** 15 */ readonly headers: Readonly<Record<string, string>>
}

export const emptyTaskMessage: TaskMessage = {
  type: "",
  payload: undefined,
  id: "",
  queue: "",
  retry: 0,
  retried: 0,
  errorMsg: "",
  timeout: 0,
  deadline: 0,
  uniqueKey: "",
  lastFailedAt: 0,
  retention: 0,
  completedAt: 0,
  groupKey: "",
  headers: {}
}

/**
 * Encodes a TaskMessage as Go's proto.Marshal does: fields in number order, defaults omitted,
 * headers sorted by key. One BinaryWriter is reused, its buffer kept (encoding is synchronous;
 * `finish()` copies the bytes out and resets it).
 */
const writer = new BinaryWriter()
export const encodeTaskMessage = (m: TaskMessage): Uint8Array => {
  try {
    return writeTaskMessage(writer, m)
  } catch (e) {
    writer.finish() // drop the partial message, so the next encode starts clean
    throw e
  }
}

const writeTaskMessage = (w: BinaryWriter, m: TaskMessage): Uint8Array => {
  writeString(w, 1, m.type)
  writeBytes(w, 2, m.payload)
  writeString(w, 3, m.id)
  writeString(w, 4, m.queue)
  writeInt32(w, 5, m.retry)
  writeInt32(w, 6, m.retried)
  writeString(w, 7, m.errorMsg)
  writeInt64(w, 8, m.timeout)
  writeInt64(w, 9, m.deadline)
  writeString(w, 10, m.uniqueKey)
  writeInt64(w, 11, m.lastFailedAt)
  writeInt64(w, 12, m.retention)
  writeInt64(w, 13, m.completedAt)
  writeString(w, 14, m.groupKey)
  writeStringMap(w, 15, m.headers)
  return w.finish()
}

/**
 * Decodes a TaskMessage as Go's proto.Unmarshal does: any field order, unknown fields (and known
 * numbers with an unexpected wire type) skipped, a repeated scalar's last value wins, duplicate
 * header keys keep the last. Throws MessageDecodeError (wrap with Effect.try).
 */
export const decodeTaskMessage = (bytes: Uint8Array, key?: string): TaskMessage =>
  decodeWith("TaskMessage", bytes, key, (r) => {
    const m: Mutable<TaskMessage> = { ...emptyTaskMessage }
    const headers: Record<string, string> = {}
    while (r.pos < r.len) {
      const [no, wt] = r.tag()
      if (wt === WireType.LengthDelimited) {
        switch (no) {
          case 1: m.type = readString(r); continue
          case 2: m.payload = readBytes(r); continue
          case 3: m.id = readString(r); continue
          case 4: m.queue = readString(r); continue
          case 7: m.errorMsg = readString(r); continue
          case 10: m.uniqueKey = readString(r); continue
          case 14: m.groupKey = readString(r); continue
          case 15: { const [k, v] = readMapEntry(r, readString, ""); setEntry(headers, k, v); continue }
        }
      } else if (wt === WireType.Varint) {
        switch (no) {
          case 5: m.retry = r.int32(); continue
          case 6: m.retried = r.int32(); continue
          case 8: m.timeout = readInt64(r); continue
          case 9: m.deadline = readInt64(r); continue
          case 11: m.lastFailedAt = readInt64(r); continue
          case 12: m.retention = readInt64(r); continue
          case 13: m.completedAt = readInt64(r); continue
        }
      }
      r.skip(wt, no)
    }
    m.headers = headers
    return m
  })
