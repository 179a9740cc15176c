import { Data } from "effect"

export { InvalidArgument, InvalidState, QueueNotFound, TaskNotFound } from "../broker/errors.js"

/** deleteQueue without `force` on a queue that still holds tasks. */
export class QueueNotEmpty extends Data.TaggedError("QueueNotEmpty")<{
  readonly queue: string
  /** How many tasks the queue holds (all states). */
  readonly size: number
  readonly message: string
}> {}

/** clusterNodes on a Redis that is not a Redis Cluster. */
export class NotACluster extends Data.TaggedError("NotACluster")<{
  readonly target: string
  readonly message: string
}> {}
