import { Clock, Effect } from "effect"
import { Broker } from "../broker/Broker.js"
import { queueKeys } from "../wire/keys.js"
import { InvalidArgument } from "./errors.js"
import { requireQueue } from "./requireQueue.js"
import type { DailyStats } from "./types.js"

const dayMs = 24 * 60 * 60 * 1000

/** Processed/failed counts of the last `days` days, today first (asynq's History). */
export const history = Effect.fn("Inspector.history")(function* (queue: string, days: number) {
  if (!Number.isInteger(days) || days < 1 || days > 90) {
    return yield* new InvalidArgument({ field: "days", message: `days must be a whole number from 1 to 90 (asynq keeps daily stats for 90 days), got ${days}` })
  }
  yield* requireQueue(queue)
  const { redis } = yield* Broker
  const now = yield* Clock.currentTimeMillis
  const k = queueKeys(queue)
  const times = Array.from({ length: days }, (_, i) => now - i * dayMs)
  const keys = times.flatMap((t) => [k.processed(t), k.failed(t)])
  const values = yield* redis.use("mget daily stats", (c) => c.mget(...keys))
  const count = (v: string | null | undefined) => (v ? Number(v) || 0 : 0)
  return times.map(
    (t, i): DailyStats => ({
      queue,
      processed: count(values[2 * i]),
      failed: count(values[2 * i + 1]),
      date: new Date(Math.floor(t / dayMs) * dayMs)
    })
  )
})
