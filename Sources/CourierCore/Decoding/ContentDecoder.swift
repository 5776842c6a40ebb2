/// Streams a compressed body (gzip, deflate, br, zstd) into plain pieces with a hard bound on the
/// decoded size: the shared half of the codings' decoders (`ZlibDecoder`, `BrotliDecoder`,
/// `ZstdDecoder`).
///
/// Decoding is incremental (a piece in, pieces out) so memory stays at one 64 KiB output window
/// plus the coding's own state however large the body. The bound is checked on every output
/// piece, so a decompression bomb (a few KiB inflating to gigabytes) fails with
/// `.decodedTooLarge` after at most the limit, never after memory runs out. A consumer that
/// pauses (`stopping`) leaves input for the next call, and output the coding still holds is
/// flagged by `hasPendingOutput`.
package class ContentDecoder {
    package enum Coding: Equatable, CaseIterable {
        case gzip
        case deflate
        case brotli
        case zstd
    }

    /// What `Accept-Encoding` offers when decoding is on: every coding Courier decodes.
    package static let acceptEncoding = "gzip, deflate, br, zstd"

    package let limit: UInt64
    package internal(set) var decodedBytes: UInt64 = 0
    /// After a decode that stopped early: how many input bytes it left (the caller keeps them).
    package internal(set) var unconsumedInput = 0
    /// After a decode that stopped early: the coding may hold output for input it already took,
    /// so the next decode runs even with no new input.
    package internal(set) var hasPendingOutput = false
    /// The 64 KiB window decoded pieces are written to before the sink sees them.
    var output = [UInt8](repeating: 0, count: 64 * 1024)

    /// The coding named by a Content-Encoding value: nil for identity (or no header),
    /// `.unsupportedEncoding` for a coding Courier cannot decode (or a list of several).
    package static func coding(for contentEncoding: String?) -> Result<Coding?, CourierError> {
        guard let value = contentEncoding?.lowercased().trimmingSpaces, !value.isEmpty, value != "identity" else {
            return .success(nil)
        }
        switch value {
        case "gzip", "x-gzip": return .success(.gzip)
        case "deflate": return .success(.deflate)
        case "br": return .success(.brotli)
        case "zstd": return .success(.zstd)
        default: return .failure(CourierError(.unsupportedEncoding, "unsupported Content-Encoding \"\(value)\""))
        }
    }

    /// A decoder for `coding` that fails past `limit` decoded bytes.
    package static func make(_ coding: Coding, limit: UInt64) -> ContentDecoder {
        switch coding {
        case .gzip, .deflate: return ZlibDecoder(coding: coding, limit: limit)
        case .brotli: return BrotliDecoder(limit: limit)
        case .zstd: return ZstdDecoder(limit: limit)
        }
    }

    init(limit: UInt64) {
        self.limit = limit
    }

    /// Decodes a piece of the body, passing each decoded piece to `sink`. Returns the first error
    /// (corrupt data, the size bound, or the sink's own).
    package final func decode(_ input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        decode(input, stopping: { false }, into: sink)
    }

    /// `decode`, returning early when `stopping()` turns true after a piece (a consumer that
    /// paused): `unconsumedInput` then says how much of `input` is left for the next call.
    package func decode(_ input: UnsafeRawBufferPointer, stopping: () -> Bool,
                        into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        fatalError("a coding's decoder overrides decode")
    }

    /// The body ended: the compressed stream must have ended too, or the body was cut short.
    package func finish() -> CourierError? {
        fatalError("a coding's decoder overrides finish")
    }

    /// Counts `produced` bytes of `output` against the bound and hands them to `sink`.
    final func emit(_ produced: Int, _ sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        decodedBytes += UInt64(produced)
        if decodedBytes > limit {
            return CourierError(.decodedTooLarge, "more than \(limit) bytes after decoding")
        }
        return output.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
