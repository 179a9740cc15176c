/**
 * Script argument encoding: protobuf bytes are passed as the Uint8Array itself. Each transport
 * sends a Uint8Array as its raw bytes (Redis.ts wraps it in a Buffer view for ioredis, which would
 * otherwise send the text "10,3,…"; the HTTP transport base64-encodes it for the Lua prelude).
 */
export const bytesArg = (bytes: Uint8Array): Uint8Array => bytes
