import CBrotli

/// `br` (RFC 7932) through libbrotlidec's streaming decoder (see `ContentDecoder`). A brotli
/// stream is one stream: bytes after its end are corrupt, as after a deflate stream.
final class BrotliDecoder: ContentDecoder {
    private let state: OpaquePointer?
    private var ended = false
    private var sawInput = false

    override init(limit: UInt64) {
        state = BrotliDecoderCreateInstance(nil, nil, nil)
        super.init(limit: limit)
    }

    deinit {
        if let state { BrotliDecoderDestroyInstance(state) }
    }

    override package func decode(_ input: UnsafeRawBufferPointer, stopping: () -> Bool,
                                 into sink: (UnsafeRawBufferPointer) -> CourierError?) -> CourierError? {
        guard let state else { return CourierError(.corruptEncoding, "brotli could not start") }
        unconsumedInput = 0
        let drain = hasPendingOutput
        hasPendingOutput = false
        guard input.count > 0 || drain else { return nil }
        if ended { return input.count > 0 ? CourierError(.corruptEncoding, "data after the end of the brotli stream") : nil }
        if input.count > 0 { sawInput = true }
        var empty: UInt8 = 0
        return withUnsafeMutablePointer(to: &empty) { placeholder -> CourierError? in
            var availableIn = input.count
            var nextIn: UnsafePointer<UInt8>? = input.count > 0 ? input.bindMemory(to: UInt8.self).baseAddress : UnsafePointer(placeholder)
            while true {
                var availableOut = output.count
                let result = output.withUnsafeMutableBufferPointer { out -> BrotliDecoderResult in
                    var nextOut = out.baseAddress
                    return BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                }
                let produced = output.count - availableOut
                if result == BROTLI_DECODER_RESULT_ERROR {
                    // What was decoded before the fault goes out first (see ZstdDecoder).
                    if produced > 0, let error = emit(produced, sink) { return error }
                    let reason = String(cString: BrotliDecoderErrorString(BrotliDecoderGetErrorCode(state)))
                    return CourierError(.corruptEncoding, "brotli: \(reason)")
                }
                if produced > 0 {
                    if let error = emit(produced, sink) { return error }
                    if result == BROTLI_DECODER_RESULT_SUCCESS { ended = true }
                    if stopping() {
                        unconsumedInput = availableIn
                        hasPendingOutput = result == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT
                        return nil
                    }
                }
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    ended = true
                    return availableIn > 0 ? CourierError(.corruptEncoding, "data after the end of the brotli stream") : nil
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                    continue
                default:
                    return nil  // needs more input: all of this piece was taken
                }
            }
        }
    }

    override package func finish() -> CourierError? {
        guard sawInput else { return CourierError(.corruptEncoding, "empty brotli body") }
        return ended ? nil : CourierError(.corruptEncoding, "compressed body ends before its stream does")
    }
}
