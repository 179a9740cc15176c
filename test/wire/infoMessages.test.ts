import { describe, expect, it } from "vitest"
import { MessageDecodeError } from "../../src/wire/errors.js"
import { decodeSchedulerEnqueueEvent, encodeSchedulerEnqueueEvent } from "../../src/wire/SchedulerEnqueueEvent.js"
import { decodeSchedulerEntry, encodeSchedulerEntry } from "../../src/wire/SchedulerEntry.js"
import { decodeServerInfo, encodeServerInfo } from "../../src/wire/ServerInfo.js"
import { goZeroTime, isGoZeroTime } from "../../src/wire/Timestamp.js"
import { decodeWorkerInfo, encodeWorkerInfo } from "../../src/wire/WorkerInfo.js"
import { fromHex, hex } from "../support/fixtures.js"
import {
  asDecoded,
  schedulerEnqueueEvent,
  schedulerEntry,
  serverInfo,
  type Vector,
  vectors,
  workerInfo
} from "./fromFixture.js"

interface Codec<M> {
  readonly fromFields: (f: Record<string, unknown>) => M
  readonly encode: (m: M) => Uint8Array
  readonly decode: (b: Uint8Array, key?: string) => M
}

const v = vectors()
const cases: ReadonlyArray<readonly [string, ReadonlyArray<Vector>, number, Codec<any>]> = [
  ["ServerInfo", v.server_info, 3, { fromFields: serverInfo, encode: encodeServerInfo, decode: decodeServerInfo }],
  ["WorkerInfo", v.worker_info, 3, { fromFields: workerInfo, encode: encodeWorkerInfo, decode: decodeWorkerInfo }],
  [
    "SchedulerEntry",
    v.scheduler_entry,
    4,
    { fromFields: schedulerEntry, encode: encodeSchedulerEntry, decode: decodeSchedulerEntry }
  ],
  [
    "SchedulerEnqueueEvent",
    v.scheduler_enqueue_event,
    2,
    { fromFields: schedulerEnqueueEvent, encode: encodeSchedulerEnqueueEvent, decode: decodeSchedulerEnqueueEvent }
  ]
]

describe.each(cases)("%s codec against Go asynq's vectors", (name, vs, count, codec) => {
  it(`covers all ${count} vectors`, () => {
    expect(vs).toHaveLength(count)
  })

  it.each(vs.map((x) => [x.name, x] as const))("%s: encodes byte for byte", (_, x) => {
    const bytes = codec.encode(codec.fromFields(x.fields))
    expect(hex(bytes)).toBe(x.hex)
    expect(bytes.length).toBe(x.byte_length)
  })

  it.each(vs.map((x) => [x.name, x] as const))("%s: decodes to the vector's fields", (_, x) => {
    expect(codec.decode(fromHex(x.hex))).toEqual(asDecoded(codec.fromFields(x.fields)))
  })

  it("fails with MessageDecodeError naming the message and key when any vector is cut short", () => {
    for (const x of vs) {
      const cut = fromHex(x.hex).subarray(0, x.byte_length - 1)
      expect(() => codec.decode(cut, "k1"), x.name).toThrow(MessageDecodeError)
      expect(() => codec.decode(cut, "k1"), x.name).toThrow(new RegExp(`^${name} at k1 is not a valid asynq ${name}`))
    }
  })
})

describe("Go zero time in Timestamps", () => {
  it("reads a never-run entry's prev_enqueue_time and a zero WorkerInfo deadline as Go's zero time", () => {
    const never = v.scheduler_entry.find((x) => x.name === "every_30s_never_enqueued")!
    expect(decodeSchedulerEntry(fromHex(never.hex)).prevEnqueueTime).toEqual(goZeroTime)
    const w = v.worker_info.find((x) => x.name === "nil_payload_zero_deadline")!
    expect(isGoZeroTime(decodeWorkerInfo(fromHex(w.hex)).deadline)).toBe(true)
    expect(decodeWorkerInfo(fromHex(w.hex)).taskPayload).toBeUndefined()
  })
})
