import * as Effect from "effect/Effect"
import { usedSignatureKey } from "../wire/keys.js"
import { Broker } from "./Broker.js"

/**
 * Marks a request signature as used until `ttlMs` from now (SET NX PX, one key: Cluster-safe).
 * Returns true when this call claimed it, false when it was already used (a replay).
 */
export const claimSignature = Effect.fn("Broker.claimSignature")(function* (signatureHex: string, ttlMs: number) {
  const { redis } = yield* Broker
  // A plain command (not ioredis's `set`): it runs over every transport, the light one included.
  const reply = yield* redis.command("claim request signature", ["SET", usedSignatureKey(signatureHex), "1", "PX", Math.max(1, Math.ceil(ttlMs)), "NX"])
  return reply === "OK"
})
