import Testing
@testable import CourierCore

/// Records what the decoder reports, so a response can be checked as a transcript.
final class DecoderRecorder: ResponseDecoderDelegate {
    var heads: [ResponseHead] = []
    var contentLengths: [UInt64?] = []
    var body: [UInt8] = []
    var failHeadWith: CourierError?

    func decoderDidReceiveHead(_ head: consuming ResponseHead, contentLength: UInt64?) -> CourierError? {
        heads.append(head)
        contentLengths.append(contentLength)
        return failHeadWith
    }

    func decoderDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        body.append(contentsOf: bytes)
        return nil
    }
}

/// The outcome of decoding one response from a byte string, independent of how it was split.
struct DecodeOutcome: Equatable, CustomStringConvertible {
    var status: Int?
    var reason: String?
    var headers: [String]
    var body: String
    var trailers: [String]
    var result: String

    var description: String { "status=\(status.map(String.init) ?? "-") reason=\(reason ?? "-") headers=\(headers) body=\(body.debugDescription) trailers=\(trailers) result=\(result)" }
}

/// Feeds `wire` in the given pieces, then EOF if `eof`; stops at the first completion or error.
func decode(_ wire: [UInt8], splits: [Int] = [], eof: Bool = false, expectsBody: Bool = true,
            limits: ResponseLimits = ResponseLimits()) -> DecodeOutcome {
    let decoder = ResponseDecoder(limits: limits)
    let recorder = DecoderRecorder()
    decoder.delegate = recorder
    decoder.begin(expectsBody: expectsBody)
    var cuts = [0] + splits.filter { $0 > 0 && $0 < wire.count } + [wire.count]
    cuts = Array(Set(cuts)).sorted()
    var result = "needMore"
    var consumedTotal = 0
    outer: for i in 0..<(cuts.count - 1) {
        let piece = Array(wire[cuts[i]..<cuts[i + 1]])
        let progress = piece.withUnsafeBytes { decoder.feed($0) }
        switch progress {
        case .needMore:
            consumedTotal += piece.count
        case .complete(let consumed, let keepAlive):
            consumedTotal += consumed
            result = "complete keepAlive=\(keepAlive) leftover=\(wire.count - consumedTotal)"
            break outer
        case .failed(let error):
            result = "failed \(error.code.rawValue)"
            break outer
        }
    }
    if result == "needMore", eof {
        switch decoder.finish() {
        case .complete(_, let keepAlive): result = "complete keepAlive=\(keepAlive) leftover=0 (eof)"
        case .failed(let error): result = "failed \(error.code.rawValue)"
        case .needMore: result = "needMore"
        }
    }
    let head = recorder.heads.last
    // How much of a failed response's body was passed on depends on where the reads split; only
    // the verdict matters then.
    if result.hasPrefix("failed") { recorder.body.removeAll() }
    return DecodeOutcome(
        status: head?.status,
        reason: head?.reason,
        headers: head.map { h in h.headers.map { "\($0.name): \($0.value)" } } ?? [],
        body: String(decoding: recorder.body, as: UTF8.self),
        trailers: decoder.trailers.map { "\($0.name): \($0.value)" },
        result: result)
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

/// The shotgun check (hyper's `all_async_cases`): the same response split at every offset, and fed
/// one byte at a time, must decode exactly as when fed whole.
func expectSplitInvariant(_ wire: String, eof: Bool = false, expectsBody: Bool = true,
                          limits: ResponseLimits = ResponseLimits(), sourceLocation: SourceLocation = #_sourceLocation) -> DecodeOutcome {
    let data = bytes(wire)
    let whole = decode(data, eof: eof, expectsBody: expectsBody, limits: limits)
    for offset in 1..<max(2, data.count) {
        let split = decode(data, splits: [offset], eof: eof, expectsBody: expectsBody, limits: limits)
        #expect(split == whole, "split at \(offset)", sourceLocation: sourceLocation)
        if split != whole { break }
    }
    let byteByByte = decode(data, splits: Array(1..<data.count), eof: eof, expectsBody: expectsBody, limits: limits)
    #expect(byteByByte == whole, "byte by byte", sourceLocation: sourceLocation)
    return whole
}

@Suite("ResponseDecoder")
struct ResponseDecoderTests {
    @Test func contentLengthBody() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello")
        #expect(out.status == 200)
        #expect(out.headers == ["Content-Length: 5", "Content-Type: text/plain"])
        #expect(out.body == "hello")
        #expect(out.result == "complete keepAlive=true leftover=0")
    }

    @Test func chunkedBodyWithTrailers() {
        let wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
            + "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Sum: 42\r\n\r\n"
        let out = expectSplitInvariant(wire)
        #expect(out.body == "hello world")
        #expect(out.trailers == ["X-Sum: 42"])
        #expect(out.result == "complete keepAlive=true leftover=0")
    }

    @Test func closeDelimitedBodyEndsAtEOF() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end", eof: true)
        #expect(out.body == "until the end")
        #expect(out.result == "complete keepAlive=false leftover=0 (eof)")
    }

    @Test func http10WithoutLengthIsCloseDelimited() {
        let out = expectSplitInvariant("HTTP/1.0 200 OK\r\n\r\nold", eof: true)
        #expect(out.body == "old")
        #expect(out.result.hasPrefix("complete keepAlive=false"))
    }

    @Test func http10KeepAliveWithLength() {
        let out = expectSplitInvariant("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok")
        #expect(out.result == "complete keepAlive=true leftover=0")
    }

    @Test func connectionCloseDisablesKeepAlive() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        #expect(out.result == "complete keepAlive=false leftover=0")
    }

    @Test func interimResponsesAreSkipped() {
        let wire = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let out = expectSplitInvariant(wire)
        #expect(out.status == 200)
        #expect(out.headers == ["Content-Length: 2"])
        #expect(out.body == "ok")
    }

    @Test func switchingProtocolsIsRejected() {
        let out = expectSplitInvariant("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n")
        #expect(out.result == "failed \(CourierError.Code.unexpectedUpgrade.rawValue)")
    }

    @Test func headResponseHasNoBodyDespiteContentLength() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", expectsBody: false)
        #expect(out.body == "")
        #expect(out.result == "complete keepAlive=true leftover=0")
    }

    @Test func noContentAndNotModifiedNeverHaveBodies() {
        // A 204 that claims a length must not make the client wait for (or eat) body bytes.
        let noContent = expectSplitInvariant("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")
        #expect(noContent.result == "complete keepAlive=true leftover=0")
        let notModified = expectSplitInvariant("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n")
        #expect(notModified.result == "complete keepAlive=true leftover=0")
        #expect(notModified.status == 304)
    }

    @Test func bytesAfterTheResponseAreReportedAsLeftover() {
        let out = decode(bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA"))
        #expect(out.result == "complete keepAlive=true leftover=5")
    }

    @Test func headerValuesAreTrimmedAndFoldedPiecesJoined() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nX-A:    spaced value   \r\nX-Empty:\r\nContent-Length: 0\r\n\r\n")
        #expect(out.headers == ["X-A: spaced value", "X-Empty: ", "Content-Length: 0"])
    }

    @Test func differingContentLengthsAreAmbiguous() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")
        #expect(out.result == "failed \(CourierError.Code.ambiguousFraming.rawValue)")
    }

    @Test func contentLengthWithTransferEncodingIsAmbiguous() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(out.result == "failed \(CourierError.Code.ambiguousFraming.rawValue)")
        let reversed = expectSplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(reversed.result == "failed \(CourierError.Code.ambiguousFraming.rawValue)")
    }

    @Test(arguments: ["-1", "abc", "99999999999999999999999", "5 5", "0x10"])
    func invalidContentLength(_ value: String) {
        let out = decode(bytes("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\nhello"))
        #expect(out.result == "failed \(CourierError.Code.badContentLength.rawValue)", "Content-Length: \(value)")
    }

    @Test(arguments: ["zz\r\nhello\r\n0\r\n\r\n", "-5\r\nhello\r\n0\r\n\r\n", "fffffffffffffffffff\r\n", "5\r\nhelloXX0\r\n\r\n"])
    func invalidChunks(_ chunks: String) {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
        #expect(out.result == "failed \(CourierError.Code.badChunk.rawValue)", "\(chunks.debugDescription) -> \(out)")
    }

    /// RFC 9112 section 7.1.1: `chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )`,
    /// with token or quoted-string values. Every valid form decodes to the same body.
    @Test(arguments: [
        "6 ; ws = 1", "6;a", "6;a=b", "6\t;\ta\t=\tb", "6;a=\"x;y\"", "6;a=\"say \\\"hi\\\"\"", "6;a;b=c;d = \"\"",
        "06", "0006;x=y", "6 ;a;b", "6;a=\"\u{e9}\"",
    ])
    func validChunkExtensions(_ sizeLine: String) {
        let wire = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(sizeLine)\r\nchunk!\r\n0 ; last = \"yes\"\r\n\r\n"
        let out = expectSplitInvariant(wire)
        #expect(out.body == "chunk!", "\(sizeLine.debugDescription) -> \(out)")
        #expect(out.result == "complete keepAlive=true leftover=0", "\(sizeLine.debugDescription) -> \(out)")
    }

    /// What the grammar does not allow is still refused: whitespace not leading to ";" or "=",
    /// empty names, unterminated quotes, bad escapes, bare LF, CR without LF, data without CRLF.
    @Test(arguments: [
        "6 \r\nchunk!\r\n0\r\n\r\n", "6;\r\nchunk!\r\n0\r\n\r\n", "6;=x\r\nchunk!\r\n0\r\n\r\n", "6;a=\r\nchunk!\r\n0\r\n\r\n",
        "6;a=\"x\r\nchunk!\r\n0\r\n\r\n", "6;a=b c\r\nchunk!\r\n0\r\n\r\n", "6;a b\r\nchunk!\r\n0\r\n\r\n", "6;a=b \r\nchunk!\r\n0\r\n\r\n",
        "6\nchunk!\r\n0\r\n\r\n", "6\rchunk!\r\n0\r\n\r\n", "6\r\nchunk!0\r\n\r\n", "6\r\nchunk!\n0\r\n\r\n", "6;a=\"\u{01}\"\r\nchunk!\r\n0\r\n\r\n",
        " 6\r\nchunk!\r\n0\r\n\r\n", "6;a=\"\\\u{01}\"\r\nchunk!\r\n0\r\n\r\n", "6\r\nchunk!\r\n0\r\n\n", "10000000000000000\r\n",
        "ffffffffffffffff0\r\n",
    ])
    func invalidChunkFraming(_ chunks: String) {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
        #expect(out.result == "failed \(CourierError.Code.badChunk.rawValue)", "\(chunks.debugDescription) -> \(out)")
    }

    @Test func largestChunkSizeStillParses() {
        // 16 hex digits fit in 64 bits: the size is accepted (and the body then simply continues).
        let out = decode(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc"))
        #expect(out.result == "needMore")
        #expect(out.body == "abc")
    }

    @Test func endlessChunkExtensionIsBounded() {
        var limits = ResponseLimits()
        limits.maxHeaderBytes = 200
        let out = decode(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=" + String(repeating: "a", count: 300)), limits: limits)
        #expect(out.result == "failed \(CourierError.Code.badChunk.rawValue)")
    }

    @Test(arguments: ["X Bad: 1\r\n\r\n", ": empty\r\n\r\n", "X-A: \u{00}\r\n\r\n", " folded\r\n\r\n", "X-A: 1\n\r\n", "X-A: 1\r\r\n"])
    func invalidTrailers(_ trailer: String) {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n" + trailer)
        #expect(out.result == "failed \(CourierError.Code.badHeader.rawValue)", "\(trailer.debugDescription) -> \(out)")
    }

    @Test func trailersCountAgainstTheHeadLimits() {
        var limits = ResponseLimits()
        limits.maxHeaderCount = 3
        let many = expectSplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-1: a\r\n\r\n0\r\nT-1: a\r\nT-2: b\r\nT-3: c\r\n\r\n", limits: limits)
        #expect(many.result == "failed \(CourierError.Code.headerCountExceeded.rawValue)")
        var bytesLimit = ResponseLimits()
        bytesLimit.maxHeaderBytes = 80
        let big = expectSplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: " + String(repeating: "v", count: 100) + "\r\n\r\n", limits: bytesLimit)
        #expect(big.result == "failed \(CourierError.Code.headerBytesExceeded.rawValue)")
    }

    @Test func trailerValuesAreTrimmed() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Sum:  42 \t\r\nX-Empty:\r\n\r\n")
        #expect(out.trailers == ["X-Sum: 42", "X-Empty: "])
        #expect(out.result == "complete keepAlive=true leftover=0")
    }

    @Test func bytesAfterAChunkedBodyAreLeftover() {
        let out = decode(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nEXTRA"))
        #expect(out.body == "ok")
        #expect(out.result == "complete keepAlive=true leftover=5")
    }

    @Test func chunkedWithConnectionCloseIsNotKeptAlive() {
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
        #expect(out.result == "complete keepAlive=false leftover=0")
    }

    @Test func headsLargerThanTheSpanScratchAndSplitAcrossReads() {
        // More fields than the 96 lent spans hold, split at every offset: the spans move into the
        // parser's own memory and the bytes are stashed between reads.
        let fields = (0..<70).map { "X-Field-\($0): value number \($0)\r\n" }.joined()
        let out = expectSplitInvariant("HTTP/1.1 200 Fine Thanks\r\n\(fields)Content-Length: 2\r\n\r\nok")
        #expect(out.reason == "Fine Thanks")
        #expect(out.headers.count == 71)
        #expect(out.headers.first == "X-Field-0: value number 0")
        #expect(out.headers[69] == "X-Field-69: value number 69")
        #expect(out.body == "ok")
    }

    @Test(arguments: ["GARBAGE\r\n\r\n", "HTTP/1.1 2OO OK\r\n\r\n", "HTTP/9.9 200 OK\r\n\r\n", "ICY 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n"])
    func garbageStatusLines(_ wire: String) {
        let out = decode(bytes(wire))
        #expect(out.result == "failed \(CourierError.Code.badStatusLine.rawValue)", "\(wire.debugDescription) -> \(out)")
    }

    @Test func malformedHeaderLine() {
        let out = decode(bytes("HTTP/1.1 200 OK\r\nBad Header Name: x\r\n\r\n"))
        #expect(out.result == "failed \(CourierError.Code.badHeader.rawValue)")
    }

    @Test func headerByteLimit() {
        var limits = ResponseLimits()
        limits.maxHeaderBytes = 100
        let big = String(repeating: "a", count: 200)
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nX-Big: \(big)\r\nContent-Length: 0\r\n\r\n", limits: limits)
        #expect(out.result == "failed \(CourierError.Code.headerBytesExceeded.rawValue)")
    }

    @Test func headerCountLimit() {
        var limits = ResponseLimits()
        limits.maxHeaderCount = 3
        let fields = (0..<5).map { "X-\($0): v\r\n" }.joined()
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\n\(fields)\r\n", limits: limits)
        #expect(out.result == "failed \(CourierError.Code.headerCountExceeded.rawValue)")
    }

    @Test func bodyLimitFromContentLengthFailsBeforeReading() {
        var limits = ResponseLimits()
        limits.maxBodyBytes = 3
        let out = decode(bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"), limits: limits)
        #expect(out.result == "failed \(CourierError.Code.bodyTooLarge.rawValue)")
    }

    @Test func bodyLimitOnChunkedBody() {
        var limits = ResponseLimits()
        limits.maxBodyBytes = 8
        let out = expectSplitInvariant("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", limits: limits)
        #expect(out.result == "failed \(CourierError.Code.bodyTooLarge.rawValue)")
    }

    @Test func truncatedBodiesAtEOF() {
        let truncated = decode(bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello"), eof: true)
        #expect(truncated.result == "failed \(CourierError.Code.truncatedBody.rawValue)")
        let truncatedChunked = decode(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"), eof: true)
        #expect(truncatedChunked.result == "failed \(CourierError.Code.truncatedBody.rawValue)")
        let inHead = decode(bytes("HTTP/1.1 200 OK\r\nContent-Le"), eof: true)
        #expect(inHead.result == "failed \(CourierError.Code.connectionReset.rawValue)")
        let nothing = decode([], eof: true)
        #expect(nothing.result == "failed \(CourierError.Code.emptyReply.rawValue)")
    }

    @Test func delegateCanStopAtTheHead() {
        let decoder = ResponseDecoder()
        let recorder = DecoderRecorder()
        recorder.failHeadWith = CourierError(.tooManyRedirects)
        decoder.delegate = recorder
        decoder.begin(expectsBody: true)
        let result = bytes("HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n").withUnsafeBytes { decoder.feed($0) }
        #expect(result == .failed(CourierError(.tooManyRedirects)))
    }

    @Test func decoderIsReusableAcrossKeepAliveResponses() {
        let decoder = ResponseDecoder()
        let recorder = DecoderRecorder()
        decoder.delegate = recorder
        for i in 0..<3 {
            decoder.begin(expectsBody: true)
            let wire = bytes("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nX-N: \(i)\r\n\r\n\(i)")
            let result = wire.withUnsafeBytes { decoder.feed($0) }
            #expect(result == .complete(consumed: wire.count, keepAlive: true))
        }
        #expect(recorder.heads.map { $0.headers["x-n"] } == ["0", "1", "2"])
        #expect(String(decoding: recorder.body, as: UTF8.self) == "012")
    }
}
