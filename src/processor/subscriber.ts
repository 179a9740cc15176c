/**
 * One pub/sub connection per server: `asynq:cancel` (task ids to cancel, sent by asynq's
 * Inspector.CancelProcessing or our publishCancel) and the wake-up channel. ioredis resubscribes
 * after a reconnect; messages sent while disconnected are lost, so a reconnect raises the wake
 * signal (a fetch looks at the queues at once) — a lost cancel is lost, as in asynq. With parking
 * (parking.ts), also this worker's presence channel (while it has a subscriber, and the worker's
 * liveness mark is fresh, enqueues hand this worker tasks: pushReceiver.ts takes them); this
 * connection's reconnects go to the parking state.
 */
import * as Effect from "effect/Effect"
import { subscribeChannels } from "../broker/subscribe.js"
import { cancelChannel, parkedPresenceChannel } from "../wire/keys.js"
import type { Registry } from "./registry.js"
import type { Signal } from "./Signal.js"
import { wakeChannel } from "./wake.js"
import type { ParkingState } from "./parking.js"

export const subscribe = Effect.fn("Processor.subscribe")(function* (queues: ReadonlyArray<string>, registry: Registry, wake: Signal, parking?: { readonly server: string; readonly state: ParkingState }) {
  const served = new Set(queues)
  yield* subscribeChannels(parking ? [cancelChannel, wakeChannel, parkedPresenceChannel(parking.server)] : [cancelChannel, wakeChannel], {
    onMessage: (channel, message) => {
      if (channel === cancelChannel) {
        registry.stop(message, "canceled")
      } else if (channel === wakeChannel && served.has(message)) {
        wake.raise()
      }
    },
    onReady: () => {
      parking?.state.onReconnect()
      wake.raise()
    }
  })
})
