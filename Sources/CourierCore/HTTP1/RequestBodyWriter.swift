/// Sends a connection's request bodies after their heads: from memory in one write, or streamed
/// from a `BodySource` (files with sendfile, forms, producers) as the stream and the send rate
/// take them, with chunked framing for a body of unknown length.
///
/// Pull, not push: the next piece is read only once the previous one left, so an upload holds
/// one piece in memory. The connection makes one writer the first time it sends a body and keeps
/// it; bodiless requests never touch it. Everything runs on the loop thread.
final class RequestBodyWriter {
    private unowned(unsafe) let connection: HTTP1Connection
    private let stream: any ByteStream
    private unowned(unsafe) let resources: HTTP1Resources
    /// The streamed body being sent, until its last piece left (or the exchange ended).
    private var source: (any BodySource)?
    /// A piece read from `source` that the send rate holds back until it is on schedule (valid
    /// until the source's next read, which waits for it).
    private var heldPiece: BodyRead?
    private var pumping = false
    private var pumpAgain = false
    private var chunksWritten = 0
    /// Chunk-size lines written so far: on the wire, but not body (progress counts the body).
    private(set) var framingBytes = 0
    /// Body bytes handed to the stream so far.
    private var payloadHanded: UInt64 = 0
    /// The send rate's schedule, for a body sent under a rate limit.
    private var pacer: RatePacer?
    /// A background operation's body: it yields to foreground work (`BackgroundBodyGate`).
    private var yields = false
    /// When the held body looks at the gate again (`.max`: it does not wait).
    private var holdUntil: UInt64 = .max
    /// When the hold began.
    private var heldSince: UInt64 = 0
    /// The body held `maxHold` and went on: it holds again only once the gate was open.
    private var heldEnough = false

    init(connection: HTTP1Connection, stream: any ByteStream, resources: HTTP1Resources) {
        self.connection = connection
        self.stream = stream
        self.resources = resources
    }

    /// Whether a streamed body is being sent.
    var isSending: Bool { source != nil }
    /// When a piece the rate holds back may go, or a held background body goes on regardless
    /// (`.max`: neither).
    var resumeAt: UInt64 { min(pacer?.resumeAt ?? .max, holdUntil) }

    /// Writes `head`, then `transfer`'s body (not empty): at once, after a 100 (`awaitingContinue`:
    /// `continueAllowed` sends it), or streamed.
    func send(head: UnsafeRawBufferPointer, of transfer: Transfer, awaitingContinue: Bool) {
        chunksWritten = 0
        framingBytes = 0
        payloadHanded = 0
        let rate = transfer._options.sendRateLimit
        pacer = rate > 0 ? RatePacer(limit: rate) : nil
        yields = transfer._options.priority < .normal
        holdUntil = .max
        heldEnough = false
        if yields, let socket = stream.facts.socket?.socketDescriptor { BackgroundBodyGate.limitUnsent(socket, true) }
        switch transfer._body {
        case .empty:
            preconditionFailure("the body writer asked to send an empty body")
        case .bytes(let body) where rate > 0 || yields:
            // In pieces, each sent when the rate allows (a quarter second's worth at most), or
            // for a background body, when no foreground work holds it.
            let piece = rate > 0 ? Int(min(64 << 10, max(1, rate / 4))) : Int(BackgroundBodyGate.unsentLimit)
            start(BytesBodySource(body, pieceSize: piece), head: head, transfer: transfer)
        case .bytes(let body) where !awaitingContinue:
            body.withUnsafeBytes { stream.write(head, $0, final: true) }
        case .bytes:
            // Held for the 100 (`continueAllowed` sends it).
            stream.write(head, nil, final: false)
        case .file, .multipart, .stream:
            guard let made = transfer._body.makeSource(length: transfer.requestBodyLength) else {
                preconditionFailure("a streamed body without a source")
            }
            switch made {
            case .failure(let error):
                connection.abortExchange(error)
            case .success(let source):
                start(source, head: head, transfer: transfer)
            }
        }
    }

    /// Writes the head, then the body from `source` as the stream (and the rate) takes it.
    private func start(_ source: any BodySource, head: UnsafeRawBufferPointer, transfer: Transfer) {
        self.source = source
        let pending = connection.bodyPending
        stream.write(head, nil, final: !pending)
        if !pending { close() }
        // (The head's write may have failed the exchange already.)
        if connection.transfer === transfer { pump() }
    }

    /// The body held for `100 Continue` may go.
    func continueAllowed(_ transfer: Transfer) {
        if source == nil, case .bytes(let body) = transfer._body {
            body.withUnsafeBytes { stream.write($0, nil, final: true) }
        } else {
            pump()
        }
    }

    /// The rate timer fired at `now`: send the held piece when it is due, or look whether a held
    /// background body may go on.
    func rateTimerFired(now: UInt64) {
        if now >= holdUntil {
            recheckHold(now: now)
            return
        }
        guard pacer?.timerFired(now: now) == true, source != nil else { return }
        pump()
    }

    /// Holds a background body while foreground work runs (no send silence meanwhile): the
    /// connection's timer brings it back to `recheckHold`.
    private func holdForForeground() {
        heldSince = connection.nowMillis
        holdUntil = heldSince &+ BackgroundBodyGate.recheck
        connection.producerWaits(true)
        connection.pacingChanged()
    }

    /// A held body goes on once no foreground work runs, or after `maxHold`; else it looks again.
    private func recheckHold(now: UInt64) {
        if resources.backgroundGate.isClosed {
            if now &- heldSince < BackgroundBodyGate.maxHold {
                holdUntil = now &+ BackgroundBodyGate.recheck
                connection.pacingChanged()
                return
            }
            heldEnough = true
        }
        holdUntil = .max
        connection.producerWaits(false)
        connection.pacingChanged()
        pump()
    }

    /// Sends pieces while the stream takes them without queueing: the next piece is read only once
    /// the previous one left. A loop rather than recursion (a write the kernel takes at once
    /// reports from inside the call), so a fast socket cannot deepen the stack.
    func pump() {
        if pumping {
            pumpAgain = true
            return
        }
        pumping = true
        defer { pumping = false }
        repeat {
            pumpAgain = false
            guard let source, let transfer = connection.transfer, !stream.hasPendingWrites, !connection.bodyAwaitsContinue else { return }
            if yields {
                guard holdUntil == .max else { return }
                if !resources.backgroundGate.isClosed {
                    heldEnough = false
                } else if !heldEnough {
                    holdForForeground()
                    return
                }
            }
            if pacer == nil, let file = source.nextFile, !transfer.requestBodyChunked {
                guard sendFilePiece(file, transfer: transfer) else { continue }
            }
            let read = heldPiece ?? source.read()
            heldPiece = nil
            if pacer != nil, !mayGo(read) {
                heldPiece = read
                connection.pacingChanged()
                return
            }
            switch read {
            case .bytes(let piece):
                writePiece(piece, transfer: transfer)
            case .array(let piece):
                piece.withUnsafeBytes { writePiece($0, transfer: transfer) }
            case .end:
                if transfer.requestBodyChunked {
                    RequestEncoder.encodeChunkLine(size: 0, first: chunksWritten == 0, into: &resources.chunkLine)
                    framingBytes += resources.chunkLine.count
                    close()
                    stream.write(resources.chunkLine.bytes, nil, final: true)
                } else {
                    close()
                    connection.abortExchange(CourierError(.fileRead, "the body ended \(transfer.requestBodyLength - payloadHanded) bytes before its announced length"))
                }
            case .pending:
                connection.producerWaits(true)
                source.wake = { [unowned(unsafe) self, weak source] in
                    guard let source, source === self.source else { return }
                    self.connection.producerWaits(false)
                    self.pump()
                }
                return
            case .failed(let error):
                close()
                connection.abortExchange(error)
            }
        } while pumpAgain
    }

    /// Whether the send rate lets `read` go now (only pieces with bytes wait).
    private func mayGo(_ read: BodyRead) -> Bool {
        let size: Int
        switch read {
        case .bytes(let bytes): size = bytes.count
        case .array(let bytes): size = bytes.count
        case .end, .pending, .failed: return true
        }
        return pacer!.mayGo(size: size, handed: payloadHanded, now: connection.nowMillis)
    }

    /// The next part of a file body straight from the page cache (`SocketStream.sendFile`): as
    /// much as the socket takes, counted and reported as a write. False when it did something
    /// (sent, failed): pump again, or stop; true when the piece must go the usual way (the socket
    /// is full: that piece's completion is the wake; or the stream cannot, as under TLS).
    private func sendFilePiece(_ file: FileBodySource, transfer: Transfer) -> Bool {
        let left = transfer.requestBodyLength - payloadHanded
        let want = Int(min(file.remaining, left, 1 << 30))
        guard want > 0 else { return true }
        if let problem = file.checkBeforeSending(want) {
            close()
            connection.abortExchange(problem)
            return false
        }
        switch stream.facts.plainSocket?.sendFile(file.descriptor, count: want) ?? .unavailable {
        case .sent(let n):
            file.sentElsewhere(n)
            payloadHanded += UInt64(n)
            let final = payloadHanded == transfer.requestBodyLength
            if final { close() }
            pumpAgain = !final
            connection.streamDidWrite(n, final: final)
            return false
        case .endOfFile:
            close()
            connection.abortExchange(file.shrank)
            return false
        case .failed:
            return false
        case .full, .unavailable:
            return true
        }
    }

    private func writePiece(_ piece: UnsafeRawBufferPointer, transfer: Transfer) {
        guard piece.count > 0 else {
            pumpAgain = true
            return
        }
        if transfer.requestBodyChunked {
            RequestEncoder.encodeChunkLine(size: piece.count, first: chunksWritten == 0, into: &resources.chunkLine)
            chunksWritten += 1
            framingBytes += resources.chunkLine.count
            payloadHanded += UInt64(piece.count)
            stream.write(resources.chunkLine.bytes, piece, final: false)
            return
        }
        let left = transfer.requestBodyLength - payloadHanded
        let sent = UnsafeRawBufferPointer(rebasing: piece.prefix(Int(min(UInt64(piece.count), left))))
        payloadHanded += UInt64(sent.count)
        let final = payloadHanded == transfer.requestBodyLength
        // (The source's buffer holds the piece until the write returned: closed after it.)
        let finished = final ? source : nil
        if final { source = nil }
        stream.write(sent, nil, final: final)
        if let finished {
            finished.wake = nil
            finished.close()
        }
    }

    /// Stops sending: the exchange ended, or the server answered before the body was out.
    func close() {
        heldPiece = nil
        pacer = nil
        holdUntil = .max
        if yields {
            yields = false
            if let socket = stream.facts.socket?.socketDescriptor { BackgroundBodyGate.limitUnsent(socket, false) }
        }
        guard let source else { return }
        self.source = nil
        source.wake = nil
        source.close()
    }
}
