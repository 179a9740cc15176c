/**
 * One pub/sub connection per server: `asynq:cancel` (task ids to cancel, sent by asynq's
 * Inspector.CancelProcessing or our publishCancel), the wake-up channel and, with a forwarder, the
 * forward channel (a scheduled or retry task due earlier than the forwarder planned to look). ioredis resubscribes
 * after a reconnect; messages sent while disconnected are lost, so a reconnect raises the wake
 * signal (a fetch looks at the queues at once) — a lost cancel is lost, as in asynq. With parking
 * (parking.ts), also this worker's presence channel (while it has a subscriber, and the worker's
 * liveness mark is fresh, enqueues hand this worker tasks: pushReceiver.ts takes them); this
 * connection's reconnects go to the parking state.
 */
import * as Effect from "effect/Effect"
import { subscribeChannels } from "../broker/subscribe.js"
import { cancelChannel, forwardChannel, parkedPresenceChannel } from "../wire/keys.js"
import type { Registry } from "./registry.js"
import type { Signal } from "./Signal.js"
import { wakeChannel } from "./wake.js"
import type { ParkingState } from "./parking.js"
import type { ForwardWake } from "./forwarder.js"

export const subscribe = Effect.fn("Processor.subscribe")(function* (
  queues: ReadonlyArray<string>,
  registry: Registry,
  wake: Signal,
  parking?: { readonly server: string; readonly state: ParkingState },
  forwardWake?: ForwardWake
) {
  const served = new Set(queues)
  const channels = [
    cancelChannel,
    wakeChannel,
    ...(forwardWake ? [forwardChannel] : []),
    ...(parking ? [parkedPresenceChannel(parking.server)] : [])
  ]
  yield* subscribeChannels(channels, {
    onMessage: (channel, message) => {
      if (channel === cancelChannel) {
        registry.stop(message, "canceled")
      } else if (channel === wakeChannel && served.has(message)) {
        wake.raise()
      } else if (channel === forwardChannel && forwardWake) {
        announceDue(message, served, forwardWake)
      }
    },
    onReady: () => {
      parking?.state.onReconnect()
      wake.raise()
      // Announcements sent while disconnected are lost: the forwarder looks now.
      forwardWake?.signal.raise()
    }
  })
})

/** A `forwardChannel` message, `<due unix ms> <queue>`: announced to the forwarder when the queue is served. */
const announceDue = (message: string, served: ReadonlySet<string>, forwardWake: ForwardWake) => {
  const space = message.indexOf(" ")
  if (space <= 0) return
  const dueMs = Number(message.slice(0, space))
  if (Number.isFinite(dueMs) && served.has(message.slice(space + 1))) forwardWake.announce(dueMs)
}
