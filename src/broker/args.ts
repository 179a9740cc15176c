/**
 * Script argument encoding. ioredis sends a Buffer as raw bytes but turns a plain Uint8Array into
 * the text "10,3,…", so protobuf bytes must be passed as a Buffer view (no copy).
 */
export const bytesArg = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
