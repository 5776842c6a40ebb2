import CNGHTTP2

/// What nghttp2 reports while it reads, turned into the streams' and the machine's events.
extension HTTP2Connection: HTTP2SessionEvents {
    /// Most CONTINUATION frames one header block may take (CVE-2024-27316's flood is bounded
    /// here, whatever the library's version does; the block's bytes are bounded by the head
    /// limit too, so large frames cannot carry it further).
    static let maxContinuations = 100

    package func frameBegins(type: UInt8, length: Int, streamID: Int32) -> Bool {
        switch Int(type) {
        case Int(NGHTTP2_HEADERS.rawValue), Int(NGHTTP2_PUSH_PROMISE.rawValue):
            headerBlockFrames = 1
            headerBlockBytes = length
            headerBlock.clear()
        case Int(NGHTTP2_CONTINUATION.rawValue):
            headerBlockFrames += 1
            headerBlockBytes += length
            if headerBlockFrames > Self.maxContinuations || headerBlockBytes > maxHeaderBytes + 16 << 10 {
                sentGoAwayError = nil
                perform(machine.connectionLost(CourierError(.http2Protocol,
                    "a header block of more than \(Self.maxContinuations) frames or \(maxHeaderBytes) bytes (CONTINUATION flood)")))
                return false
            }
        default:
            break
        }
        return true
    }

    package func headerField(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        // nghttp2's one callback per field, so the stream is used unretained: judging a field
        // only notes it in the stream, which stays in `streams` meanwhile.
        if let last = lastStream, last._withUnsafeGuaranteedRef({ $0.id == streamID }) {
            return last._withUnsafeGuaranteedRef { gather(name, value, for: $0) }
        }
        guard let carrier = stream(streamID) else { return true }
        return gather(name, value, for: carrier)
    }

    /// Adds a field the stream keeps to the block being received (false: the stream refused it).
    @inline(__always)
    private func gather(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, for carrier: HTTP2Stream) -> Bool {
        switch carrier.headerField(name: name, value: value, fieldsSoFar: headerBlock.count) {
        case .keep:
            headerBlock.append(name: name, value: value)
            return true
        case .skip:
            return true
        case .refuse:
            return false
        }
    }

    package func headersEnded(streamID: Int32, endStream: Bool) {
        guard let carrier = stream(streamID) else { return }
        carrier.headersEnded(endStream: endStream, now: nowMillis)
    }

    package func dataReceived(streamID: Int32, bytes: UnsafeRawBufferPointer) {
        session.consumedOnConnection(bytes.count)
        guard let carrier = stream(streamID) else { return }
        carrier.dataReceived(bytes, now: nowMillis)
    }

    package func dataEndedStream(streamID: Int32) {
        stream(streamID)?.responseEnded()
    }

    package func resetReceived(streamID: Int32, errorCode: UInt32) {
        streams.find(Int(streamID))?.resetByServer = errorCode
    }

    package func streamClosed(streamID: Int32, errorCode: UInt32) {
        guard let carrier = removeStream(streamID) else { return }
        carrier.closed(errorCode: errorCode)
    }

    package func settingsReceived() {
        perform(machine.settingsReceived(maxConcurrentStreams: session.peerMaxConcurrentStreams))
    }

    package func goAwayReceived(lastStreamID: Int32, errorCode: UInt32) {
        goAwayError = errorCode == 0 ? nil : errorCode
        perform(machine.goAwayReceived(lastStreamID: lastStreamID, error: errorCode))
    }

    package func goAwaySent(errorCode: UInt32) {
        if errorCode != 0 { sentGoAwayError = errorCode }
    }

    package func pingAcknowledged() {
        machine.pingAcknowledged(now: nowMillis)
    }

    package func bodyPull(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyPull {
        guard let carrier = stream(streamID) else { return .failed }
        return carrier.pullBody(into: buffer)
    }

    /// The open stream `id`: the one asked for last when it is that one again (nghttp2 reports
    /// a response's fields, head and body one after the other), else the table's.
    @inline(__always)
    func stream(_ id: Int32) -> HTTP2Stream? {
        if let last = lastStream, last._withUnsafeGuaranteedRef({ $0.id == id }) { return last.takeUnretainedValue() }
        let found = streams.find(Int(id))
        lastStream = found.map { Unmanaged.passUnretained($0) }
        return found
    }

    /// Takes stream `id` out of `streams` (and out of `lastStream`, which must never outlive
    /// the table's reference).
    func removeStream(_ id: Int32) -> HTTP2Stream? {
        guard let removed = streams.remove(Int(id)) else { return nil }
        if lastStream?.toOpaque() == Unmanaged.passUnretained(removed).toOpaque() { lastStream = nil }
        return removed
    }

    // MARK: - From the streams

    /// A stream ended: the machine counts it, the owner hears how.
    func streamEnded(_ carrier: HTTP2Stream, _ transfer: Transfer, outcome: ExchangeOutcome) {
        if case .success = outcome { streamsCompleted += 1 }
        let action = machine.streamClosed(now: nowMillis)
        owner.http2StreamFinished(self, transfer, outcome: outcome)
        perform(action)
        arm(machine.nextDeadline)
    }

    /// A paused stream's consumer can take more.
    func resume(_ carrier: HTTP2Stream) {
        carrier.resumed(now: nowMillis)
        flush()
        arm(carrier.nextWake)
    }
}
