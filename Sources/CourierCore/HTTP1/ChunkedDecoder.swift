/// The chunked transfer coding (RFC 9112 section 7.1), decoded as a value fed any split of bytes.
///
/// Courier decodes chunk framing itself rather than through llhttp: llhttp 8 (Debian 12's)
/// rejects valid chunk extensions with whitespace (`6 ; name = value`, which the grammar allows
/// as BWS), and a client must accept every valid form while still refusing everything else. The
/// grammar, exactly:
///
///     chunked-body    = *chunk last-chunk trailer-section CRLF
///     chunk           = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
///     chunk-size      = 1*HEXDIG
///     last-chunk      = 1*("0") [ chunk-ext ] CRLF
///     chunk-ext       = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
///     chunk-ext-name  = token
///     chunk-ext-val   = token / quoted-string
///     trailer-section = *( field-line CRLF )
///     field-line      = field-name ":" OWS field-value OWS
///
/// Refused, with `.badChunk`: a size that is not hex or does not fit in 64 bits, whitespace not
/// followed by `;` or `=`, a bare LF or a CR without LF, data not followed by CRLF, a chunk line
/// longer than the head's byte budget. Trailer fields are checked like header fields (`.badHeader`)
/// and count against the same byte and field budgets (`.headerBytesExceeded`,
/// `.headerCountExceeded`). Extensions are parsed and ignored, as RFC 9112 lets a recipient do.
package struct ChunkedDecoder {
    /// The result of feeding bytes.
    package enum Progress: Equatable {
        /// Every byte was consumed; the body continues.
        case needMore
        /// The body (with its trailers) ended after `consumed` bytes of this feed.
        case complete(consumed: Int)
        /// The framing is invalid, a budget was exceeded, or the body handler stopped it.
        case failed(CourierError)
    }

    private enum State: Equatable {
        /// Hex digits of a chunk size; `digits` counts significant ones (overflow check).
        case size(digits: Int)
        /// Whitespace after the size: only `;` (or more whitespace) may follow.
        case sizeSpace
        /// After `;` and any whitespace: a name must start.
        case extensionNameStart
        case extensionName
        /// Whitespace after a name: `=`, `;` or more whitespace.
        case extensionNameSpace
        /// After `=` and any whitespace: a token or a quoted string must start.
        case extensionValueStart
        case extensionToken
        case extensionQuoted
        case extensionQuotedEscape
        /// After a value: `;`, CR, or whitespace that must lead to `;`.
        case extensionValueEnd
        case extensionValueSpace
        /// CR of the chunk line seen: LF must follow.
        case sizeLineFeed
        case data
        case dataCarriageReturn
        case dataLineFeed
        /// Start of a trailer line, or of the CRLF that ends the body.
        case trailerLineStart
        case trailerName
        case trailerValue
        case trailerLineFeed
        case finalLineFeed
        case done
    }

    private var state = State.size(digits: 0)
    /// The size being read, then the data left in the current chunk.
    private var remaining: UInt64 = 0
    private var lineBytes = 0
    private var byteBudget: Int
    private var fieldBudget: Int
    private var trailerName: [UInt8] = []
    private var trailerValue: [UInt8] = []
    /// Trailer fields received.
    package private(set) var trailers = HTTPHeaders()

    /// A decoder whose chunk lines and trailers may use `byteBudget` bytes and `fieldBudget`
    /// fields (what the head left of the response's limits).
    package init(byteBudget: Int, fieldBudget: Int) {
        self.byteBudget = byteBudget
        self.fieldBudget = fieldBudget
    }

    /// Whether the body has ended.
    package var isComplete: Bool { state == .done }

    /// Decodes `bytes`, handing chunk data to `body` (valid only during the call; an error from it
    /// stops decoding).
    package mutating func feed(_ bytes: UnsafeRawBufferPointer,
                               body: (UnsafeRawBufferPointer) -> CourierError?) -> Progress {
        var index = 0
        let count = bytes.count
        while index < count {
            if state == .data {
                let take = Int(min(remaining, UInt64(count - index)))
                if let error = body(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)])) { return .failed(error) }
                index += take
                remaining -= UInt64(take)
                if remaining == 0 { state = .dataCarriageReturn }
                continue
            }
            let byte = bytes[index]
            index += 1
            if let error = step(byte) { return .failed(error) }
            if state == .done { return .complete(consumed: index) }
        }
        return .needMore
    }

    /// One byte of framing (everything but chunk data).
    private mutating func step(_ byte: UInt8) -> CourierError? {
        switch state {
        case .size(let digits):
            if let value = ByteClass.hexValue(byte) {
                if remaining == 0 && value == 0 { return countLine() }
                guard digits < 16 else { return Self.bad("chunk size does not fit in 64 bits") }
                remaining = remaining << 4 | UInt64(value)
                state = .size(digits: digits + 1)
                return countLine()
            }
            guard lineBytes > 0 else { return Self.bad("chunk size expected, found \(Self.show(byte))") }
            return afterSize(byte)
        case .sizeSpace:
            if ByteClass.isSpace(byte) { return countLine() }
            guard byte == UInt8(ascii: ";") else { return Self.bad("only \";\" may follow whitespace after a chunk size") }
            state = .extensionNameStart
            return countLine()
        case .extensionNameStart:
            if ByteClass.isSpace(byte) { return countLine() }
            guard ByteClass.isToken(byte) else { return Self.bad("chunk extension name expected, found \(Self.show(byte))") }
            state = .extensionName
            return countLine()
        case .extensionName:
            if ByteClass.isToken(byte) { return countLine() }
            switch byte {
            case UInt8(ascii: "="): state = .extensionValueStart
            case UInt8(ascii: ";"): state = .extensionNameStart
            case 0x20, 0x09: state = .extensionNameSpace
            case 0x0D: state = .sizeLineFeed
            default: return Self.bad("invalid byte \(Self.show(byte)) in a chunk extension name")
            }
            return countLine()
        case .extensionNameSpace:
            switch byte {
            case 0x20, 0x09: break
            case UInt8(ascii: "="): state = .extensionValueStart
            case UInt8(ascii: ";"): state = .extensionNameStart
            default: return Self.bad("only \"=\" or \";\" may follow whitespace in a chunk extension")
            }
            return countLine()
        case .extensionValueStart:
            if ByteClass.isSpace(byte) { return countLine() }
            if byte == UInt8(ascii: "\"") {
                state = .extensionQuoted
            } else if ByteClass.isToken(byte) {
                state = .extensionToken
            } else {
                return Self.bad("chunk extension value expected, found \(Self.show(byte))")
            }
            return countLine()
        case .extensionToken:
            if ByteClass.isToken(byte) { return countLine() }
            return afterValue(byte)
        case .extensionQuoted:
            switch byte {
            case UInt8(ascii: "\""): state = .extensionValueEnd
            case UInt8(ascii: "\\"): state = .extensionQuotedEscape
            case 0x09, 0x20, 0x21, 0x23...0x5B, 0x5D...0x7E, 0x80...0xFF: break
            default: return Self.bad("invalid byte \(Self.show(byte)) in a quoted chunk extension")
            }
            return countLine()
        case .extensionQuotedEscape:
            switch byte {
            case 0x09, 0x20, 0x21...0x7E, 0x80...0xFF: state = .extensionQuoted
            default: return Self.bad("invalid escaped byte \(Self.show(byte)) in a chunk extension")
            }
            return countLine()
        case .extensionValueEnd:
            return afterValue(byte)
        case .extensionValueSpace:
            if ByteClass.isSpace(byte) { return countLine() }
            guard byte == UInt8(ascii: ";") else { return Self.bad("only \";\" may follow whitespace after a chunk extension") }
            state = .extensionNameStart
            return countLine()
        case .sizeLineFeed:
            guard byte == 0x0A else { return Self.bad("CR without LF ending a chunk line") }
            lineBytes = 0
            state = remaining == 0 ? .trailerLineStart : .data
            return nil
        case .data:
            preconditionFailure("chunk data is consumed in bulk by feed")
        case .dataCarriageReturn:
            guard byte == 0x0D else { return Self.bad("chunk data longer than its size (no CRLF after it)") }
            state = .dataLineFeed
            return nil
        case .dataLineFeed:
            guard byte == 0x0A else { return Self.bad("CR without LF after chunk data") }
            state = .size(digits: 0)
            return nil
        case .trailerLineStart:
            if byte == 0x0D {
                state = .finalLineFeed
                return nil
            }
            if byte == 0x0A { return Self.bad("bare LF ending the chunked body") }
            guard ByteClass.isToken(byte) else { return Self.badTrailer("a trailer field name expected, found \(Self.show(byte))") }
            guard fieldBudget > 0 else { return CourierError(.headerCountExceeded, "too many trailer fields") }
            fieldBudget -= 1
            trailerName = [byte]
            trailerValue = []
            state = .trailerName
            return spendTrailerByte()
        case .trailerName:
            if ByteClass.isToken(byte) {
                trailerName.append(byte)
            } else if byte == UInt8(ascii: ":") {
                state = .trailerValue
            } else {
                return Self.badTrailer("invalid byte \(Self.show(byte)) in trailer field name")
            }
            return spendTrailerByte()
        case .trailerValue:
            switch byte {
            case 0x0D:
                state = .trailerLineFeed
            case 0x09, 0x20...0x7E, 0x80...0xFF:
                trailerValue.append(byte)
            default:
                return Self.badTrailer("invalid byte \(Self.show(byte)) in trailer field value")
            }
            return spendTrailerByte()
        case .trailerLineFeed:
            guard byte == 0x0A else { return Self.badTrailer("CR without LF in the trailer section") }
            trailerName.withUnsafeBytes { name in
                trailerValue.withUnsafeBytes { value in
                    // OWS around the value is not part of it (RFC 9110 section 5.5).
                    var start = 0
                    var end = value.count
                    while start < end, ByteClass.isSpace(value[start]) { start += 1 }
                    while end > start, ByteClass.isSpace(value[end - 1]) { end -= 1 }
                    trailers.appendField(name: name, value: UnsafeRawBufferPointer(rebasing: value[start..<end]))
                }
            }
            state = .trailerLineStart
            return nil
        case .finalLineFeed:
            guard byte == 0x0A else { return Self.bad("CR without LF ending the chunked body") }
            state = .done
            return nil
        case .done:
            preconditionFailure("bytes fed after the chunked body ended")
        }
    }

    private mutating func afterSize(_ byte: UInt8) -> CourierError? {
        switch byte {
        case 0x0D: state = .sizeLineFeed
        case UInt8(ascii: ";"): state = .extensionNameStart
        case 0x20, 0x09: state = .sizeSpace
        default: return Self.bad("invalid byte \(Self.show(byte)) after a chunk size")
        }
        return countLine()
    }

    private mutating func afterValue(_ byte: UInt8) -> CourierError? {
        switch byte {
        case 0x0D: state = .sizeLineFeed
        case UInt8(ascii: ";"): state = .extensionNameStart
        case 0x20, 0x09: state = .extensionValueSpace
        default: return Self.bad("invalid byte \(Self.show(byte)) after a chunk extension value")
        }
        return countLine()
    }

    /// Counts a byte of the chunk line against the byte budget (an endless extension must not
    /// keep a connection busy forever).
    private mutating func countLine() -> CourierError? {
        lineBytes += 1
        return lineBytes > byteBudget ? Self.bad("chunk line longer than \(byteBudget) bytes") : nil
    }

    private mutating func spendTrailerByte() -> CourierError? {
        byteBudget -= 1
        return byteBudget < 0 ? CourierError(.headerBytesExceeded, "trailer section too large") : nil
    }

    private static func show(_ byte: UInt8) -> String {
        byte >= 0x21 && byte <= 0x7E ? "\"\(Character(Unicode.Scalar(byte)))\"" : "0x\(String(byte, radix: 16))"
    }

    private static func bad(_ detail: String) -> CourierError { CourierError(.badChunk, detail) }
    private static func badTrailer(_ detail: String) -> CourierError { CourierError(.badHeader, detail) }
}
