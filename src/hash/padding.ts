/**
 * The message padding MD5, SHA-1 and SHA-256 share: the bytes, 0x80, zeros up to 56 mod 64, then
 * the length in bits in 8 bytes (little-endian for MD5, big-endian for SHA). A view over whole
 * 64-byte blocks. (Our hashes are plain TypeScript: edge runtimes have no `node:crypto`, and Web
 * Crypto's digest is asynchronous and has no MD5.)
 */
export const paddedBlocks = (data: Uint8Array, littleEndian: boolean): DataView => {
  const padded = new Uint8Array((((data.length + 8) >>> 6) + 1) << 6)
  padded.set(data)
  padded[data.length] = 0x80
  const view = new DataView(padded.buffer)
  const bitLength = data.length * 8
  const low = bitLength >>> 0
  const high = Math.floor(bitLength / 4294967296)
  view.setUint32(padded.length - 8, littleEndian ? low : high, littleEndian)
  view.setUint32(padded.length - 4, littleEndian ? high : low, littleEndian)
  return view
}
