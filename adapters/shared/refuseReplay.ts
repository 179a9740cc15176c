import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { claimSignature } from "../../src/broker/claimSignature.js"
import { type AcceptedSignature, replayedSignature } from "./auth.js"

/**
 * Claims a verified HMAC signature in Redis until its window ends; a signature already claimed (a
 * replayed request) fails with a 401 `replayed_signature`. Nothing to do for other auth kinds.
 */
export const refuseReplay = Effect.fn("Endpoint.refuseReplay")(function* (accepted: AcceptedSignature | undefined) {
  if (accepted === undefined) return
  const now = yield* Clock.currentTimeMillis
  const first = yield* claimSignature(accepted.signature, accepted.expiresAtMs - now)
  if (!first) return yield* replayedSignature()
})
