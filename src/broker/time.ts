/** asynq's time units, from our millisecond clock readings. */

/** Unix seconds (asynq's zset scores and TaskMessage times), rounded down. */
export const unixSeconds = (ms: number): number => Math.floor(ms / 1000)

/**
 * A due time in unix ms as the decimal string the delaying scripts take (lua/includes/delayTask.lua
 * keeps whole seconds, rounded up, in asynq's zsets and this exact value in `due_ms`).
 */
export const unixMsString = (ms: number): string => String(ms)

/** Unix nanoseconds as a decimal string (asynq's `pending_since`). */
export const unixNanosString = (ms: number): string => (BigInt(Math.floor(ms)) * 1_000_000n).toString()

/** asynq keeps daily stat keys for 90 days. */
export const statsTtlMs = 90 * 24 * 60 * 60 * 1000

/** EXPIREAT value for a daily stat key written at `nowMs`. */
export const statsExpireAt = (nowMs: number): number => unixSeconds(nowMs + statsTtlMs)
