/**
 * Entry ids. asynq gives every registration a random uuid, so two scheduler instances running the
 * same entry cannot tell they run the same thing. Here the id is derived from what the entry is
 * (spec, effective time zone, task type, payload bytes, enqueue options): every instance that
 * registers the same entry computes the same id, and that id names the entry's per-occurrence
 * claim in Redis (exactly-once) and its history key. It is shaped like a uuid (version 8, "custom")
 * so asynq's tools show it as they show theirs. Pass an explicit `id` to keep history across edits.
 */
import type { EnqueueOptions } from "../steps/options.js"
import type { Schedule } from "./cronSpec.js"
import { sha256Hex } from "../hash/sha256.js"

/** Bytes as base64 (btoa: any runtime). */
const base64 = (bytes: Uint8Array): string => {
  let s = ""
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

const canonicalOptions = (o: EnqueueOptions | undefined): ReadonlyArray<readonly [string, unknown]> =>
  Object.entries(o ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]): readonly [string, unknown] => [
      k,
      v instanceof Date
        ? v.getTime()
        : k === "headers"
          ? Object.entries(v as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          : v
    ])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** The stable id of an entry (a uuid-shaped hex string). */
export const stableEntryId = (
  schedule: Schedule,
  type: string,
  payload: Uint8Array | undefined,
  options: EnqueueOptions | undefined
): string => {
  const what = JSON.stringify([
    schedule.spec.trim(),
    schedule.kind === "cron" ? schedule.timeZone : "",
    type,
    payload === undefined ? null : base64(payload),
    canonicalOptions(options)
  ])
  const h = sha256Hex(what)
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}
