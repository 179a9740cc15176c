import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { asInteger } from "./replies.js"
import { unixSeconds } from "./time.js"

/** Where a corrupt task is taken from: the active list (with its lease) or an aggregation set. */
export type CorruptSource = { readonly kind: "active" } | { readonly kind: "set"; readonly group: string; readonly setId: string }

/**
 * Script `archiveCorrupt`: moves a task whose message cannot be decoded to the archive, bytes
 * kept, with `error` in its hash. "archived", "dropped" (the hash had no msg), or "absent"
 * (the id was no longer in the source).
 */
export const archiveCorruptTask = Effect.fn("Broker.archiveCorrupt")(function* (
  queue: string,
  id: string,
  error: string,
  source: CorruptSource,
  nowMs: number
) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const keys = source.kind === "active" ? [k.taskPrefix, k.archived, k.active, k.lease] : [k.taskPrefix, k.archived, k.aggregationSet(source.group, source.setId)]
  const n = yield* asInteger("archiveCorrupt", yield* redis.script("archiveCorrupt", keys, [id, error, unixSeconds(nowMs), source.kind]))
  return n === 1 ? ("archived" as const) : n === 2 ? ("dropped" as const) : ("absent" as const)
})
