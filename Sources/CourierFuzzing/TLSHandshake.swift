import CourierCore

/// Fuzz target: the TLS record path in memory. A client `TLSSession` (the one every https
/// connection uses, with its custom BIO) starts a handshake, and the input plays the server:
/// its bytes arrive in input-chosen pieces as if from the socket, then, whatever the handshake
/// made of them, more bytes are offered as application records.
///
/// Checked: nothing traps; a handshake the input could not complete (it holds no certificate the
/// system trusts for "localhost") ends in a TLS error or waits for more, never "done"; reading
/// after a failure reports a failure or nothing, never plaintext.
package enum TLSHandshake {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 1, let context = Self.context,
              let session = TLSSession(context: context, host: "localhost", port: 443, session: nil) else { return }
        var random = SplitRandom(seed: UInt64(input[0]))
        var offset = 1
        var progress = session.handshake(UnsafeRawBufferPointer(start: nil, count: 0))
        session.outgoing.clear()
        var finished = false
        while offset < input.count, !finished {
            let size = min(input.count - offset, 1 + Int(random.next() % 512))
            let piece = UnsafeRawBufferPointer(rebasing: input[offset..<(offset + size)])
            offset += size
            progress = session.handshake(piece)
            session.outgoing.clear()
            switch progress {
            case .inProgress:
                continue
            case .done:
                preconditionFailure("a handshake completed with bytes that hold no trusted certificate")
            case .failed(let error):
                precondition(error.code.primary == .tls || error.code.primary == .noMemory, "handshake failed with \(error.code)")
                finished = true
            }
        }
        // The rest, as records after the handshake (or after its failure).
        if offset < input.count {
            session.receive(UnsafeRawBufferPointer(rebasing: input[offset...]))
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16_384, alignment: 16)
            defer { buffer.deallocate() }
            for _ in 0..<8 {
                switch session.readPlaintext(into: buffer) {
                case .bytes:
                    preconditionFailure("plaintext from a session whose handshake never completed")
                case .wantMore, .closed, .failed:
                    break
                }
            }
        }
        session.shutdown()
    }

    /// One context for every input: loading the trust store costs more than a handshake.
    nonisolated(unsafe) private static let context: TLSContext? = try? TLSContext.make(TLSConfiguration()).get()
}
