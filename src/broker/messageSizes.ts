/**
 * The recent average size of each queue's messages as this connection leases them: what decides
 * whether a lease reads the messages in the script (small messages: one script call) or by id
 * after it (large ones: leaseByIds.ts). One update per lease call, none per task.
 *
 * Redis's CPU time per message read (INFO cpu, batches of 50): through a script's HGET, 3.4 µs at
 * 1 KB, 11 at 4 KB, 19–22 at 10 KB and 170–220 at 100 KB; by a pipelined HGET, 1.1, 3.5, 5 and
 * 30–40. Reading by id also costs the worker a round trip and a command per task, which a small
 * message does not repay. So: an average message of at least 8 KiB, and at least 64 KiB expected in
 * the call (`count` × the average).
 */

/** Least average message size (bytes) for which a lease reads the messages by id. */
export const largeMessageBytes = 8 * 1024

/** Least bytes a lease call must be expected to bring (count × average) to read them by id. */
export const largeLeaseBytes = 64 * 1024

/** Most tasks a fetch asks for while nothing is known of the queue's message sizes (`MessageSizes.fetchCount`). */
export const coldLeaseCount = 8

/** The recent average message size per queue (an exponential average over lease calls). */
export class MessageSizes {
  private readonly average = new Map<string, number>()

  /** Records a lease call of `queue` that brought `n` messages of `bytes` bytes in all (nothing when n is 0). */
  record(queue: string, n: number, bytes: number): void {
    if (n === 0) return
    const mean = bytes / n
    const before = this.average.get(queue)
    this.average.set(queue, before === undefined ? mean : before + (mean - before) / 4)
  }

  /**
   * How many tasks a worker's fetch of up to `want` tasks of `queue` asks for: `want`, except while
   * no lease on this connection has brought a message of the queue yet: then at most
   * `coldLeaseCount`. A cold worker (a new process; every serverless drain) would otherwise lease
   * its first and largest batch through the script before it knows the size of the queue's
   * messages: a batch of 100 KB messages costs Redis several times what reading them by id costs
   * (each message copied into Lua and out of it). The sizes seen in that first call pick the way of the next.
   */
  fetchCount(queue: string, want: number): number {
    return this.average.has(queue) ? want : Math.min(want, coldLeaseCount)
  }

  /** Whether a lease of up to `count` tasks of `queue` should read the messages by id (the module comment). */
  large(queue: string, count: number): boolean {
    const average = this.average.get(queue)
    return average !== undefined && average >= largeMessageBytes && average * count >= largeLeaseBytes
  }
}
