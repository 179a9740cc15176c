/** asynq's SchedulerEntry: one periodic task, an item of the list `asynq:schedulers:{schedulerId}`. */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import {
  decodeWith,
  type Mutable,
  readBytes,
  readString,
  writeBytes,
  writeRepeatedString,
  writeString
} from "./protoFields.js"
import { epoch, readTimestamp, type Timestamp, writeTimestamp } from "./Timestamp.js"

/** asynq's SchedulerEntry protobuf message: a periodic task a scheduler publishes (spec, task, options, next and previous run). */
export interface SchedulerEntry {
  /** 1: entry id (uuid) */ readonly id: string
  /** 2: cron spec, e.g. "*\/5 * * * *" or "@every 30s" */ readonly spec: string
  /** 3 */ readonly taskType: string
  /** 4: `undefined` is Go's nil (absent on the wire) */ readonly taskPayload: Uint8Array | undefined
  /** 5: Go `Option.String()` forms, e.g. `Queue("low")`, `Timeout(30m0s)` (see goFormat.ts) */ readonly enqueueOptions: ReadonlyArray<string>
  /** 6 */ readonly nextEnqueueTime: Timestamp
  /** 7: Go's zero time (goZeroTime) when the entry has not run yet */ readonly prevEnqueueTime: Timestamp
}

/** Encodes a SchedulerEntry as asynq's protobuf bytes. */
export const encodeSchedulerEntry = (m: SchedulerEntry): Uint8Array => {
  const w = new BinaryWriter()
  writeString(w, 1, m.id)
  writeString(w, 2, m.spec)
  writeString(w, 3, m.taskType)
  writeBytes(w, 4, m.taskPayload)
  writeRepeatedString(w, 5, m.enqueueOptions)
  writeTimestamp(w, 6, m.nextEnqueueTime)
  writeTimestamp(w, 7, m.prevEnqueueTime)
  return w.finish()
}

/** Decodes a SchedulerEntry (Go rules: any order, unknown fields skipped, last wins). Throws MessageDecodeError. */
export const decodeSchedulerEntry = (bytes: Uint8Array, key?: string): SchedulerEntry =>
  decodeWith("SchedulerEntry", bytes, key, (r) => {
    const enqueueOptions: Array<string> = []
    const m: Mutable<SchedulerEntry> = {
      id: "",
      spec: "",
      taskType: "",
      taskPayload: undefined,
      enqueueOptions,
      nextEnqueueTime: epoch,
      prevEnqueueTime: epoch
    }
    while (r.pos < r.len) {
      const [no, wt] = r.tag()
      if (wt === WireType.LengthDelimited) {
        switch (no) {
          case 1:
            m.id = readString(r)
            continue
          case 2:
            m.spec = readString(r)
            continue
          case 3:
            m.taskType = readString(r)
            continue
          case 4:
            m.taskPayload = readBytes(r)
            continue
          case 5:
            enqueueOptions.push(readString(r))
            continue
          case 6:
            m.nextEnqueueTime = readTimestamp(r, m.nextEnqueueTime)
            continue
          case 7:
            m.prevEnqueueTime = readTimestamp(r, m.prevEnqueueTime)
            continue
        }
      }
      r.skip(wt, no)
    }
    return m
  })
