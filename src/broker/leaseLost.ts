import { LeaseLost } from "./errors.js"

/** The error of a transition that found the task no longer active under a lease. */
export const leaseLost = (queue: string, id: string, op: string): LeaseLost =>
  new LeaseLost({
    queue,
    id,
    message: `cannot ${op} task ${id} in queue "${queue}": it is no longer active under a lease (its lease expired and it was recovered, or it was deleted or moved)`
  })

/** The uniqueness lock key of a message, when it belongs to the queue's slot (else not touched). */
export const ownUniqueKey = (queuePrefix: string, uniqueKey: string): ReadonlyArray<string> =>
  uniqueKey !== "" && uniqueKey.startsWith(queuePrefix) ? [uniqueKey] : []
