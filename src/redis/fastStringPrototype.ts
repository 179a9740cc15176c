/**
 * A workaround for a V8 slowdown that loading ioredis 6 leaves behind in the whole process.
 *
 * ioredis 6 defines `class VerbatimString extends String` (resp/verbatim-string.js, for RESP3
 * replies). When an object becomes the prototype of a new class's prototype, V8 turns it into a
 * dictionary (slow properties) and only turns it back on the first property store to an object
 * that inherits from it. ioredis creates a VerbatimString only for a RESP3 verbatim reply, which a
 * RESP2 connection never gets, so `String.prototype` stays a dictionary for the life of the process.
 * Then no optimized code can inline a string method lookup: every `s.charCodeAt(i)`, `s.slice()`,
 * `s.startsWith()`... in the process (ours, ioredis's, the application's) goes through V8's generic
 * property-load stub. Measured on the one-by-one enqueue: about 150 such lookups per task, a quarter
 * of the instructions the process ran per task (callgrind), and a string loop 5x slower.
 *
 * One throwaway store to an object inheriting from `String.prototype` turns it back into fast
 * properties. It changes nothing observable: the object is dropped at once and `String.prototype`
 * keeps the same properties. Idempotent and cheap; called each time the Redis service is built
 * around an ioredis client (ours or one the application opened: ioredis is loaded by then). In
 * another engine, or once V8 or ioredis change, it does nothing harmful.
 */
export const restoreFastStringPrototype = (): void => {
  const o: { fast?: number } = Object.create(String.prototype)
  o.fast = 0
}
