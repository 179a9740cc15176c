import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { integerReply, unexpectedReply } from "./decode.js"
import { defineScript } from "./script.js"
import { unixSeconds } from "./time.js"
import { archiveCorruptLua } from "../redis/lua.generated.js"

/** Where a corrupt task is taken from: the active list (with its lease) or an aggregation set. */
export type CorruptSource =
  | { readonly kind: "active" }
  | { readonly kind: "set"; readonly group: string; readonly setId: string }

export interface ArchiveCorruptInput {
  readonly queue: string
  readonly id: string
  readonly error: string
  readonly source: CorruptSource
  readonly nowMs: number
}

const outcomes = { 1: "archived", 2: "dropped", 0: "absent" } as const

/**
 * Script `archiveCorrupt`: moves a task whose message cannot be decoded to the archive, bytes
 * kept, with `error` in its hash. "archived", "dropped" (the hash had no msg), or "absent"
 * (the id was no longer in the source).
 */
export const archiveCorruptScript = defineScript<ArchiveCorruptInput, "archived" | "dropped" | "absent">({
  name: "archiveCorrupt",
  source: archiveCorruptLua,
  buffers: false,
  keys: ({ queue, source }) => {
    const k = queueKeys(queue)
    return source.kind === "active"
      ? [k.taskPrefix, k.archived, k.active, k.lease]
      : [k.taskPrefix, k.archived, k.aggregationSet(source.group, source.setId)]
  },
  args: (i) => [i.id, i.error, unixSeconds(i.nowMs), i.source.kind],
  decode: (reply) =>
    Result.flatMap(integerReply("archiveCorrupt", reply), (n) => {
      const o = outcomes[n as keyof typeof outcomes]
      return o === undefined ? Result.fail(unexpectedReply("archiveCorrupt", n, "1, 2 or 0")) : Result.succeed(o)
    })
})
