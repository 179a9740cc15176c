/** asynq's ServerInfo: what a running server writes to `asynq:servers:{host:pid:id}` (heartbeat). */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import {
  decodeWith,
  type Mutable,
  readMapEntry,
  readString,
  setEntry,
  writeBool,
  writeInt32,
  writeInt32Map,
  writeString
} from "./protoFields.js"
import { epoch, readTimestamp, type Timestamp, writeTimestamp } from "./Timestamp.js"

/** asynq's ServerInfo protobuf message: a running server's identity, concurrency, queues and status. */
export interface ServerInfo {
  /** 1 */ readonly host: string
  /** 2 */ readonly pid: number
  /** 3: uuid */ readonly serverId: string
  /** 4: worker count */ readonly concurrency: number
  /** 5: queue name → priority weight */ readonly queues: Readonly<Record<string, number>>
  /** 6 */ readonly strictPriority: boolean
  /** 7: "new" | "active" | "stopped" | "closed" (asynq's server state names) */ readonly status: string
  /** 8 */ readonly startTime: Timestamp
  /** 9: tasks being processed right now */ readonly activeWorkerCount: number
}

/** Encodes a ServerInfo as asynq's protobuf bytes. */
export const encodeServerInfo = (m: ServerInfo): Uint8Array => {
  const w = new BinaryWriter()
  writeString(w, 1, m.host)
  writeInt32(w, 2, m.pid)
  writeString(w, 3, m.serverId)
  writeInt32(w, 4, m.concurrency)
  writeInt32Map(w, 5, m.queues)
  writeBool(w, 6, m.strictPriority)
  writeString(w, 7, m.status)
  writeTimestamp(w, 8, m.startTime)
  writeInt32(w, 9, m.activeWorkerCount)
  return w.finish()
}

/** Decodes a ServerInfo (Go rules: any order, unknown fields skipped, last wins). Throws MessageDecodeError. */
export const decodeServerInfo = (bytes: Uint8Array, key?: string): ServerInfo =>
  decodeWith("ServerInfo", bytes, key, (r) => {
    const queues: Record<string, number> = {}
    const m: Mutable<ServerInfo> = {
      host: "",
      pid: 0,
      serverId: "",
      concurrency: 0,
      queues,
      strictPriority: false,
      status: "",
      startTime: epoch,
      activeWorkerCount: 0
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
          case 5: {
            const [k, v] = readMapEntry(r, (e) => e.int32(), 0, WireType.Varint)
            setEntry(queues, k, v)
            continue
          }
          case 7:
            m.status = readString(r)
            continue
          case 8:
            m.startTime = readTimestamp(r, m.startTime)
            continue
        }
      } else if (wt === WireType.Varint) {
        switch (no) {
          case 2:
            m.pid = r.int32()
            continue
          case 4:
            m.concurrency = r.int32()
            continue
          case 6:
            m.strictPriority = r.bool()
            continue
          case 9:
            m.activeWorkerCount = r.int32()
            continue
        }
      }
      r.skip(wt, no)
    }
    return m
  })
