import CUV

/// The read buffers of one loop: libuv reads into `socket`, TLS decrypts into `plaintext`, and
/// the parser consumes them before the read callback returns; only header bytes are ever copied
/// out. Every connection of the loop shares them, which is why an idle pooled connection holds no
/// buffer at all.
///
/// They belong to the loop (kept in `uv_loop_t.data`), not to the process: the runtime has one
/// loop thread, but tests and tools run loops of their own on other threads at the same time, and
/// two threads reading into one buffer corrupt each other's bodies.
package enum LoopReadBuffers {
    package static let socketSize = 256 * 1024
    /// Decrypted bytes for https connections (a TLS record holds at most 16 KiB).
    static let plaintextSize = 64 * 1024

    /// Gives a new loop its buffers (before any stream on it reads).
    package static func attach(to loop: UnsafeMutablePointer<uv_loop_t>) {
        // uv_loop_init keeps whatever `data` held, so it is assigned, never tested.
        loop.pointee.data = UnsafeMutableRawPointer.allocate(byteCount: socketSize + plaintextSize, alignment: 64)
    }

    /// Frees them (the loop is closed; nothing reads any more).
    package static func detach(from loop: UnsafeMutablePointer<uv_loop_t>) {
        loop.pointee.data?.deallocate()
        loop.pointee.data = nil
    }

    /// Where sockets of `loop` read into.
    @inline(__always)
    static func socket(of loop: UnsafeMutablePointer<uv_loop_t>) -> UnsafeMutableRawPointer {
        guard let memory = loop.pointee.data else { preconditionFailure("a stream reads on a loop without read buffers") }
        return memory
    }

    /// Where TLS streams of `loop` decrypt into.
    @inline(__always)
    static func plaintext(of loop: UnsafeMutablePointer<uv_loop_t>) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: socket(of: loop) + socketSize, count: plaintextSize)
    }
}
