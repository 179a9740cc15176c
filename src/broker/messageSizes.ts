/**
 * The recent average size of each queue's messages as this connection leases them: what decides
 * whether a lease reads the messages in the script (small messages: one script call) or with SORT
 * in the same MULTI (large ones: leaseByIds.ts). One update per lease call, none per task.
 *
 * The thresholds come from Redis's own CPU time (INFO commandstats, usec of EVALSHA against
 * MULTI + EXEC) per leased task, script-only vs MULTI/SORT: at 1 KB the script alone costs about
 * half (7 against 13 µs at 10 tasks a call); at 10 KB the MULTI costs less from about 10 tasks a
 * call (19–22 against 13–14 µs) but more for one task a call (28–36 against 40–78 µs); at 100 KB
 * it costs a fifth to a half (151–264 against 31–102 µs), one task a call included. So: an average
 * message of at least 8 KiB, and at least 64 KiB expected in the call (`count` × the average).
 */

/** Least average message size (bytes) for which a lease reads the messages with SORT. */
export const largeMessageBytes = 8 * 1024

/** Least bytes a lease call must be expected to bring (count × average) to read them with SORT. */
export const largeLeaseBytes = 64 * 1024

/** Most tasks a fetch asks for while nothing is known of the queue's message sizes (`MessageSizes.fetchCount`). */
export const coldLeaseCount = 8

/** The recent average message size per queue (an exponential average over lease calls). */
export class MessageSizes {
  private readonly average = new Map<string, number>()
  private sortRefused = false

  /** Redis refused SORT's GET option on this connection (ACL): every lease goes the script-only way from now on. */
  refuseSort(): void {
    this.sortRefused = true
  }

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
   * messages: a batch of 100 KB messages costs Redis several times what SORT costs (each message
   * copied into Lua and into the reply). The sizes seen in that first call pick the way of the next.
   */
  fetchCount(queue: string, want: number): number {
    return this.average.has(queue) ? want : Math.min(want, coldLeaseCount)
  }

  /** Whether a lease of up to `count` tasks of `queue` should read the messages with SORT (the module comment; never once SORT was refused). */
  large(queue: string, count: number): boolean {
    const average = this.average.get(queue)
    return (
      !this.sortRefused && average !== undefined && average >= largeMessageBytes && average * count >= largeLeaseBytes
    )
  }
}
