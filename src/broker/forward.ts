import { Effect } from "effect"
import { queueKeys } from "../wire/keys.js"
import { Broker } from "./Broker.js"
import { asIntegers } from "./replies.js"
import { unixNanosString, unixSeconds } from "./time.js"

/** Script `forward`: due scheduled/retry tasks of one queue -> pending (or their group), at most `batch`. */
export const forwardDue = Effect.fn("Broker.forward")(function* (queue: string, nowMs: number, batch: number) {
  const { redis } = yield* Broker
  const k = queueKeys(queue)
  const reply = yield* redis.script(
    "forward",
    [k.scheduled, k.retry, k.pending, k.taskPrefix, k.groupPrefix, k.allGroups],
    [unixSeconds(nowMs), unixNanosString(nowMs), batch]
  )
  const [scheduled, retry, dropped] = yield* asIntegers("forward", reply, 3)
  return { scheduled: scheduled!, retry: retry!, dropped: dropped! }
})
