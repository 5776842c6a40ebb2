import CZstd

/// `zstd` (RFC 8878) through libzstd's streaming decoder (see `ContentDecoder`). The window is
/// limited to 8 MiB, the most RFC 8878 section 3.1.1.1.2 has HTTP decoders support: a frame that
/// asks for more is refused instead of making a hostile server's body allocate 128 MiB or more.
/// Several frames one after the other are one body. Each frame must start with RFC 8878's magic
/// number (or be a skippable frame): libzstd would also take its pre-standard "legacy" formats,
/// which no HTTP server sends and which it decodes differently when they come in pieces.
final class ZstdDecoder: ContentDecoder {
    /// log2 of the largest window accepted (8 MiB).
    static let windowLogMax: Int32 = 23

    private let stream: OpaquePointer?
    /// Whether the last frame decoded so far is complete and flushed (ZSTD_decompressStream said 0).
    private var frameComplete = false
    private var sawInput = false
    /// How many bytes of the current frame's magic number were checked (4: all).
    private var magicChecked = 0
    private static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    private static let skippableTail: [UInt8] = [0x2A, 0x4D, 0x18]

    override init(limit: UInt64) {
        stream = ZSTD_createDStream()
        if let stream { ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, Self.windowLogMax) }
        super.init(limit: limit)
    }

    deinit {
        if let stream { ZSTD_freeDStream(stream) }
    }

    override package func decode(_ input: UnsafeRawBufferPointer, stopping: () -> Bool,
                                 into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        guard let stream else { return CourierError(.corruptEncoding, "zstd could not start") }
        unconsumedInput = 0
        let drain = hasPendingOutput
        hasPendingOutput = false
        guard input.count > 0 || drain else { return nil }
        if input.count > 0 { sawInput = true }
        var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        while true {
            if let error = checkMagic(input, from: source.pos) { return error }
            let taken = source.pos
            let (hint, produced) = output.withUnsafeMutableBytes { out -> (Int, Int) in
                var target = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                let hint = ZSTD_decompressStream(stream, &target, &source)
                return (hint, target.pos)
            }
            if ZSTD_isError(hint) != 0 {
                // What was decoded before the fault goes out first (the bound may stop it), so the
                // error does not depend on how the body was split.
                if produced > 0, let error = emit(produced, sink) { return error }
                return CourierError(.corruptEncoding, "zstd: \(String(cString: ZSTD_getErrorName(hint)))")
            }
            // A call that moved nothing says nothing of the frame: after a frame's end, with no
            // input, zstd asks for the next frame's header (a non-zero hint).
            if produced > 0 || source.pos > taken {
                frameComplete = hint == 0
                if frameComplete { magicChecked = 0 }
            }
            if produced > 0 {
                if let error = emit(produced, sink) { return error }
                if stopping() {
                    unconsumedInput = source.size - source.pos
                    hasPendingOutput = produced == output.count
                    return nil
                }
            }
            // All input taken and the output not full: nothing more until the next piece.
            if source.pos == source.size, produced < output.count { return nil }
        }
    }

    /// The next bytes of a frame's start, from `offset` of `input`: zstd's magic or a skippable
    /// frame's (0x184D2A50 to 0x184D2A5F, little-endian).
    private func checkMagic(_ input: UnsafeRawBufferPointer, from offset: Int) -> CourierError? {
        var index = offset
        while magicChecked < 4, index < input.count {
            let byte = input[index]
            let expected: Bool
            if magicChecked == 0 {
                skippableSoFar = byte & 0xF0 == 0x50
                expected = byte == Self.magic[0] || skippableSoFar
            } else {
                expected = byte == (skippableSoFar ? Self.skippableTail[magicChecked - 1] : Self.magic[magicChecked])
            }
            guard expected else { return CourierError(.corruptEncoding, "zstd: not a zstd frame") }
            magicChecked += 1
            index += 1
        }
        return nil
    }

    /// Whether the magic checked so far is a skippable frame's.
    private var skippableSoFar = false

    override package func finish() -> CourierError? {
        guard sawInput else { return CourierError(.corruptEncoding, "empty zstd body") }
        return frameComplete ? nil : CourierError(.corruptEncoding, "compressed body ends before its stream does")
    }
}
