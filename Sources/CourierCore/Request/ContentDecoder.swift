import CZlib

/// Streams a gzip or deflate body through zlib with a hard bound on the decoded size.
///
/// Decoding is incremental (a piece in, pieces out) so memory stays at one 64 KiB window however
/// large the body. The bound is checked on every output piece, so a decompression bomb (a few KiB
/// inflating to gigabytes) fails with `.decodedTooLarge` after at most the limit, never after
/// memory runs out. `deflate` is tried as RFC 9110's zlib format first and, if the very first bytes
/// do not parse, as raw deflate, which some servers send instead.
package final class ContentDecoder {
    package enum Coding: Equatable {
        case gzip
        case deflate
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let coding: Coding
    private let limit: UInt64
    private var output: [UInt8]
    private var initialized = false
    private var producedAnything = false
    private var triedRaw = false
    private var ended = false
    package private(set) var decodedBytes: UInt64 = 0
    /// After a decode that stopped early: how many input bytes it left (the caller keeps them).
    package private(set) var unconsumedInput = 0
    /// After a decode that stopped early: zlib may hold output for input it already took, so the
    /// next decode runs even with no new input.
    package private(set) var hasPendingOutput = false

    /// The coding named by a Content-Encoding value: nil for identity (or no header), an error for
    /// codings Courier cannot decode.
    package static func coding(for contentEncoding: String?) -> Result<Coding?, CourierError> {
        guard let value = contentEncoding?.lowercased().trimmingSpaces, !value.isEmpty, value != "identity" else {
            return .success(nil)
        }
        switch value {
        case "gzip", "x-gzip": return .success(.gzip)
        case "deflate": return .success(.deflate)
        default: return .failure(CourierError(.corruptEncoding, "unsupported Content-Encoding \"\(value)\""))
        }
    }

    package init(coding: Coding, limit: UInt64) {
        self.coding = coding
        self.limit = limit
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = [UInt8](repeating: 0, count: 64 * 1024)
        initialized = start(windowBits: coding == .gzip ? 15 + 16 : 15)
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    private func start(windowBits: Int32) -> Bool {
        inflateInit2_(stream, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    /// Decodes a piece of the body, passing each decoded piece to `sink`. Returns the first error
    /// (corrupt data, the size bound, or the sink's own).
    package func decode(_ input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        decode(input, stopping: { false }, into: sink)
    }

    /// `decode`, returning early when `stopping()` turns true after a piece (a consumer that
    /// paused): `unconsumedInput` then says how much of `input` is left for the next call.
    package func decode(_ input: UnsafeRawBufferPointer, stopping: () -> Bool,
                        into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        guard initialized else { return CourierError(.corruptEncoding, "zlib could not start") }
        unconsumedInput = 0
        let drain = hasPendingOutput
        hasPendingOutput = false
        guard input.count > 0 || drain else { return nil }
        if input.count == 0 {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
            return inflateLoop(input, stopping: stopping, into: sink)
        }
        if ended {
            // Concatenated gzip members are legal (RFC 1952 section 2.2); anything else after the
            // end of a deflate stream is not.
            guard coding == .gzip else { return CourierError(.corruptEncoding, "data after the end of the deflate stream") }
            inflateReset(stream)
            ended = false
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        stream.pointee.avail_in = uInt(input.count)
        return inflateLoop(input, stopping: stopping, into: sink)
    }

    private func inflateLoop(_ input: UnsafeRawBufferPointer, stopping: () -> Bool,
                             into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        while stream.pointee.avail_in > 0 || !ended {
            let produced: Int
            let status: Int32 = output.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(out.count)
                let status = inflate(stream, Z_NO_FLUSH)
                return status
            }
            produced = output.count - Int(stream.pointee.avail_out)
            switch status {
            case Z_OK, Z_BUF_ERROR, Z_STREAM_END:
                break
            case Z_DATA_ERROR where coding == .deflate && !producedAnything && !triedRaw:
                // Not zlib-wrapped: restart as raw deflate with the same input.
                triedRaw = true
                inflateEnd(stream)
                initialized = start(windowBits: -15)
                guard initialized else { return CourierError(.corruptEncoding, "zlib could not restart") }
                return decode(input, stopping: stopping, into: sink)
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                return CourierError(.corruptEncoding, reason)
            }
            if produced > 0 {
                producedAnything = true
                decodedBytes += UInt64(produced)
                if decodedBytes > limit {
                    return CourierError(.decodedTooLarge, "more than \(limit) bytes after decoding")
                }
                let error = output.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
                if let error { return error }
                if stopping() {
                    unconsumedInput = Int(stream.pointee.avail_in)
                    // A full output buffer may mean more output is waiting inside zlib.
                    hasPendingOutput = produced == output.count && status != Z_STREAM_END
                    if status == Z_STREAM_END { ended = true }
                    return nil
                }
            }
            if status == Z_STREAM_END {
                ended = true
                if stream.pointee.avail_in > 0 {
                    guard coding == .gzip else { return CourierError(.corruptEncoding, "data after the end of the deflate stream") }
                    inflateReset(stream)
                    ended = false
                    continue
                }
                break
            }
            if status == Z_BUF_ERROR || (stream.pointee.avail_in == 0 && produced < output.count) { break }
        }
        return nil
    }

    /// The body ended: the compressed stream must have ended too, or the body was cut short.
    package func finish() -> CourierError? {
        ended || !initialized ? nil : CourierError(.corruptEncoding, "compressed body ends before its stream does")
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
