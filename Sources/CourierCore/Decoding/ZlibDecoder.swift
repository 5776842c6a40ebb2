import CZlib

/// gzip and deflate through zlib (see `ContentDecoder` for the contract). `deflate` is tried as
/// RFC 9110's zlib format first and, if the very first bytes do not parse, as raw deflate, which
/// some servers send instead; concatenated gzip members are decoded one after the other.
final class ZlibDecoder: ContentDecoder {
    private let stream: UnsafeMutablePointer<z_stream>
    private let coding: Coding
    private var initialized = false
    private var producedAnything = false
    private var triedRaw = false
    /// deflate: the input of earlier calls while nothing came out yet (at most `rawRetryWindow`
    /// bytes), so a retry as raw deflate starts from the body's first byte however it was split.
    private var fedBeforeOutput: [UInt8] = []
    /// How far into the body a zlib failure may come and still mean "raw deflate, try again".
    static let rawRetryWindow = 64 * 1024
    /// Bytes of a raw retry's earlier pieces not yet decoded when a consumer paused.
    private var carry: [UInt8] = []
    private var ended = false

    init(coding: Coding, limit: UInt64) {
        self.coding = coding
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        super.init(limit: limit)
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

    override package func decode(_ input: UnsafeRawBufferPointer, stopping: () -> Bool,
                                 into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        guard !carry.isEmpty else { return decodeDirect(input, stopping: stopping, into: sink) }
        let fed = carry + Array(input)
        carry = []
        return fed.withUnsafeBytes { decodeFed($0, callerBytes: input.count, stopping: stopping, into: sink) }
    }

    /// Decodes `fed`, whose last `callerBytes` are the caller's input and the rest bytes the
    /// decoder owes the stream (a raw retry's earlier pieces): a pause inside that first part keeps
    /// its rest in `carry` (the caller keeps all of its input, and is told output is pending).
    private func decodeFed(_ fed: UnsafeRawBufferPointer, callerBytes: Int, stopping: () -> Bool,
                           into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        let error = decodeDirect(fed, stopping: stopping, into: sink)
        if error == nil, unconsumedInput > callerBytes {
            carry = Array(fed[(fed.count - unconsumedInput)..<(fed.count - callerBytes)])
            unconsumedInput = callerBytes
            hasPendingOutput = true
        }
        return error
    }

    /// One call's work on `input` (the caller's, or `decodeFed`'s).
    private func decodeDirect(_ input: UnsafeRawBufferPointer, stopping: () -> Bool,
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
        let error = inflateLoop(input, stopping: stopping, into: sink)
        if coding == .deflate, !triedRaw, !producedAnything, fedBeforeOutput.count <= Self.rawRetryWindow {
            fedBeforeOutput.append(contentsOf: input[..<(input.count - unconsumedInput)])
        } else if !fedBeforeOutput.isEmpty {
            fedBeforeOutput = []
        }
        return error
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
            case Z_DATA_ERROR where coding == .deflate && !producedAnything && produced == 0 && !triedRaw
                && stream.pointee.total_in <= Self.rawRetryWindow:
                // Not zlib-wrapped: restart as raw deflate from the body's first byte (earlier
                // pieces included), whatever the pieces were.
                triedRaw = true
                inflateEnd(stream)
                initialized = start(windowBits: -15)
                guard initialized else { return CourierError(.corruptEncoding, "zlib could not restart") }
                let whole = fedBeforeOutput + Array(input)
                let earlier = fedBeforeOutput.count
                fedBeforeOutput = []
                return whole.withUnsafeBytes { decodeFed($0, callerBytes: $0.count - earlier, stopping: stopping, into: sink) }
            default:
                // What was decoded before the fault goes out first (see ZstdDecoder).
                if produced > 0, let error = emit(produced, sink) { return error }
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                return CourierError(.corruptEncoding, reason)
            }
            if produced > 0 {
                producedAnything = true
                if let error = emit(produced, sink) { return error }
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

    override package func finish() -> CourierError? {
        ended || !initialized ? nil : CourierError(.corruptEncoding, "compressed body ends before its stream does")
    }
}
