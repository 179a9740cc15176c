/**
 * Default task ids: 16 random base62 characters (≈ 95 bits, from the CSPRNG: crypto.randomFillSync
 * into a pooled buffer, refilled when used up, rather than one randomBytes call per id).
 * asynq uses a uuid v4 (36 characters). The id is written twice into every task (in the key and in
 * the protobuf message), and Redis keeps a hash in its compact listpack encoding only while every
 * value is at most 64 bytes (`hash-max-listpack-value`): a 36-character id pushes the `msg` of a
 * small task over that limit where a 16-character one keeps it under, saving memory per task.
 * Any custom id (`taskId` option) is accepted; Go asynq reads both kinds.
 */
import { randomFillSync } from "node:crypto"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
export const taskIdLength = 16

// Random bytes shared by all ids; each byte is used once.
const pool = Buffer.alloc(4096)
let poolPos = pool.length

/** A new random task id (unbiased: bytes >= 248 are skipped so each character is uniform). */
export const newTaskId = (): string => {
  let id = ""
  while (id.length < taskIdLength) {
    if (poolPos === pool.length) {
      randomFillSync(pool)
      poolPos = 0
    }
    const b = pool[poolPos++]!
    if (b < 248) id += alphabet[b % 62]
  }
  return id
}
