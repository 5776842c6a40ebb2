/// An in-memory body read in pieces: how a rate-limited upload sends bytes it has whole (a body
/// written in one go could not be held to the rate). The pieces are read in place.
package final class BytesBodySource: BodySource {
    private let bytes: [UInt8]
    private let pieceSize: Int
    private var offset = 0
    package var wake: (() -> Void)?

    /// `bytes` in pieces of at most `pieceSize` bytes.
    package init(_ bytes: [UInt8], pieceSize: Int) {
        self.bytes = bytes
        self.pieceSize = max(1, pieceSize)
    }

    package func read() -> BodyRead {
        guard offset < bytes.count else { return .end }
        let end = min(bytes.count, offset + pieceSize)
        defer { offset = end }
        // The array is immutable and kept by the source: the piece stays valid until the next read.
        return .bytes(bytes.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[offset..<end]) })
    }

    package func close() {
        offset = bytes.count
    }
}
