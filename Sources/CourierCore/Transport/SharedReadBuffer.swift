/// The read buffers every connection shares: libuv reads into `base`, TLS decrypts into
/// `plaintext`, and the parser consumes them before the read callback returns; only header bytes
/// are ever copied out. One loop thread per process means one buffer per process, which is why
/// an idle pooled connection holds no buffer at all.
enum SharedReadBuffer {
    static let size = 256 * 1024
    nonisolated(unsafe) static let base = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
    /// Decrypted bytes for https connections (a TLS record holds at most 16 KiB).
    static let plaintextSize = 64 * 1024
    nonisolated(unsafe) static let plaintext = UnsafeMutableRawPointer.allocate(byteCount: plaintextSize, alignment: 64)
}
