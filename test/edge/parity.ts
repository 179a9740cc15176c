/**
 * Wire parity between the TCP client and the edge client: the cases (payloads and options that
 * reach every field of the message, bytes that are not UTF-8 included) and what Redis holds for a
 * task once written, to compare.
 */
import type { Redis as IORedis } from "ioredis"
import { decodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { queueKeys } from "../../src/wire/keys.js"
import { zsetOf } from "../support/arrange.js"

export interface ParityCase {
  readonly name: string
  readonly payload: unknown
  readonly options: Readonly<Record<string, unknown>>
}

export const parityCases: ReadonlyArray<ParityCase> = [
  { name: "a JSON payload, default options", payload: { userId: 42, name: "zoë" }, options: {} },
  // Bytes that are not UTF-8 (0x80-0xff) in the payload, and varints ≥ 0x80 in the message.
  {
    name: "binary payload, every option",
    payload: new Uint8Array([0, 0x80, 0xff, 0xc3, 0x28, 10, 13]),
    options: {
      queue: "critical",
      maxRetry: 300,
      timeout: 90_000,
      deadline: 4_102_444_800_000,
      unique: 3_600_000,
      retention: 86_400_000,
      headers: { trace: "t-1", "x-ü": "ß" }
    }
  },
  // Larger than one base64 chunk of the transport (32 KB) and than Redis's listpack limits.
  {
    name: "a 200 KB binary payload",
    payload: Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 256),
    options: { queue: "big" }
  },
  { name: "scheduled", payload: "text payload", options: { processIn: 3_600_000, queue: "later" } },
  { name: "grouped", payload: { n: 1 }, options: { group: "digest", queue: "agg" } }
]

/** Everything Redis holds for one task: hash fields (msg as hex; pending_since only as present), where its id is, its uniqueness lock. */
export const taskSnapshot = async (raw: IORedis, queue: string, id: string) => {
  const k = queueKeys(queue)
  const hash = await raw.hgetallBuffer(k.task(id))
  const fields = Object.fromEntries(
    Object.entries(hash).map(([f, v]) => [
      f,
      f === "pending_since" ? "(a time)" : f === "msg" ? v.toString("hex") : v.toString()
    ])
  )
  const msg = hash.msg ? decodeTaskMessage(new Uint8Array(hash.msg)) : undefined
  return {
    fields,
    pending: await raw.lrange(k.pending, 0, -1),
    scheduled: (await zsetOf(raw, k.scheduled)).map(([m]) => m),
    groups: await raw.smembers(k.allGroups),
    queues: await raw.smembers("asynq:queues"),
    lock: msg?.uniqueKey ? await raw.get(msg.uniqueKey) : null
  }
}
