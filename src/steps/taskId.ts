/**
 * Default task ids: 13 random base62 characters (≈ 77 bits, from the CSPRNG: crypto.getRandomValues
 * into a pooled buffer, refilled when used up, rather than one randomBytes call per id).
 * asynq uses a uuid v4 (36 characters). The id is stored three times per task (the hash key, the
 * pending list or zset member, and inside the protobuf message), and Redis keeps a hash in its
 * compact listpack encoding only while every value is at most 64 bytes: a short id keeps the
 * `msg` of a small task under that limit and the task under ~220 bytes of Redis memory (measured:
 * 239 bytes with 16 characters, 220 with 13). A call draws one id and never replaces it: a new
 * random id that happens to exist in the queue already (odds about 1 in 10^14 with a billion tasks
 * in it) is a TaskIdConflict, because a taken id after a lost reply is far likelier the call's own
 * task, and writing it again under a second id would make two tasks.
 * Any custom id (`taskId` option) is accepted; Go asynq reads both kinds.
 */
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
export const taskIdLength = 13

// Random bytes shared by all ids; each byte is used once.
// Web Crypto (global in Node ≥ 20, workerd, edge runtimes): no node: import, so any runtime can bundle this.
const pool = new Uint8Array(4096)
let poolPos = pool.length

const codes = Array.from(alphabet, (ch) => ch.charCodeAt(0))
const idCodes: Array<number> = new Array(taskIdLength)

/** A new random task id (unbiased: bytes >= 248 are skipped so each character is uniform). */
export const newTaskId = (): string => {
  let n = 0
  while (n < taskIdLength) {
    if (poolPos === pool.length) {
      globalThis.crypto.getRandomValues(pool)
      poolPos = 0
    }
    const b = pool[poolPos++]!
    if (b < 248) idCodes[n++] = codes[b % 62]!
  }
  // One flat string (concatenating 13 characters makes a rope that is flattened later).
  return String.fromCharCode.apply(null, idCodes)
}
