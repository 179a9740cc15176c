/**
 * The command timeout of a single-node (or Sentinel) ioredis connection, kept with one timer per
 * connection instead of ioredis's one timer per command (its `commandTimeout` option arms and
 * clears a Node timer for every command: a worker's calls paid that on each of them).
 *
 * Every command the connection sends is stamped with its deadline (send time + the timeout, once:
 * a command resent after a reconnect keeps its first deadline). One timer, due at the earliest
 * deadline, looks at the commands ioredis still holds (those waiting for their reply, and those
 * queued while the connection is down) and fails the ones past their deadline with ioredis's own
 * "Command timed out" error, as its option would: the command stays in ioredis's queue, so its late
 * reply, if any, is read and dropped in order. Between looks nothing but the stamp is done per
 * command.
 *
 * A Cluster keeps ioredis's option: its node connections are made inside ioredis.
 */

/** The part of ioredis's Command the deadlines use. */
interface CommandLike {
  isSettled: boolean
  reject(e: Error): void
  [deadline]?: number
}

/** The part of ioredis's Redis client the deadlines use (its internal queues, `{ command }` entries in a Denque). */
interface QueueLike {
  readonly length: number
  peekAt(i: number): { readonly command: CommandLike } | undefined
}
interface ClientLike {
  sendCommand(command: CommandLike, stream?: unknown): unknown
  readonly commandQueue?: QueueLike
  readonly offlineQueue?: QueueLike
}

const deadline = Symbol("effect-asynq.commandDeadline")

interface Watch {
  timeoutMs: number
  timer: ReturnType<typeof setTimeout> | undefined
}

const watches = new WeakMap<object, Watch>()

/** ioredis's own timeout error: the service turns it into a CommandTimeout naming the server (ioredisContext `failure`). */
const timedOut = () => new Error("Command timed out")

/** Fails the commands of `queue` past their deadline; the earliest deadline still to come (or Infinity). */
const expire = (queue: QueueLike | undefined, now: number): number => {
  let next = Infinity
  if (queue === undefined) return next
  for (let i = 0; i < queue.length; i++) {
    const command = queue.peekAt(i)?.command
    if (command === undefined || command.isSettled) continue
    const due = command[deadline]
    if (due === undefined) continue
    if (due <= now) command.reject(timedOut())
    else if (due < next) next = due
  }
  return next
}

const arm = (client: ClientLike, watch: Watch, ms: number) => {
  watch.timer = setTimeout(() => sweep(client, watch), Math.max(1, ms))
  watch.timer.unref()
}

const sweep = (client: ClientLike, watch: Watch) => {
  watch.timer = undefined
  const now = Date.now()
  const next = Math.min(expire(client.commandQueue, now), expire(client.offlineQueue, now))
  if (next !== Infinity) arm(client, watch, next - now)
}

/**
 * Bounds every command `client` sends by `timeoutMs` (see the module's description). The client
 * must not also have ioredis's `commandTimeout` option (that would arm a timer per command again).
 */
export const watchCommandDeadlines = (client: object, timeoutMs: number): void => {
  const c = client as ClientLike
  const watch: Watch = { timeoutMs, timer: undefined }
  watches.set(c, watch)
  const send = c.sendCommand
  c.sendCommand = function (this: ClientLike, command: CommandLike, stream?: unknown) {
    if (command[deadline] === undefined) {
      command[deadline] = Date.now() + watch.timeoutMs
      if (watch.timer === undefined) arm(c, watch, watch.timeoutMs)
    }
    return send.call(this, command, stream)
  }
}

/**
 * Changes the timeout of the commands `client` sends from now on (a connection whose one command
 * blocks longer): the watch's, or ioredis's own option on a client that is not watched (a Cluster's).
 */
export const setCommandTimeout = (client: object, timeoutMs: number): void => {
  const watch = watches.get(client)
  if (watch !== undefined) watch.timeoutMs = timeoutMs
  else (client as { options: { commandTimeout?: number } }).options.commandTimeout = timeoutMs
}
