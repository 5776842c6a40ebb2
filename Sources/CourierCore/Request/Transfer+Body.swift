/// A response body's way from the carrier to the sink: decoded, delivered, held while the
/// consumer is paused, counted.
extension Transfer {
    /// Body bytes as received (still encoded).
    func receiveBody(_ bytes: UnsafeRawBufferPointer, nowMillis: UInt64) -> CourierError? {
        metrics.bodyBytesReceived &+= UInt64(bytes.count)
        if discardsBody { return nil }
        let error: CourierError?
        if case .memory = _sink, contentDecoder == nil {
            // The common case, kept direct: a body collected in memory never pauses.
            metrics.bodyBytesDecoded &+= UInt64(bytes.count)
            responseBody.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            error = nil
        } else if pausedByConsumer {
            // The rest of a read that came after the consumer paused: kept, still encoded (at
            // most one socket read), and delivered on resume.
            heldBody.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            return nil
        } else {
            error = process(bytes)
        }
        if error == nil, reportsProgress, nowMillis &- lastProgressMillis >= progressIntervalMillis {
            lastProgressMillis = nowMillis
            delegate?.transferDidProgress(self)
        }
        return error
    }

    /// Decodes and delivers encoded body bytes until they are used up or the consumer pauses;
    /// what a pause leaves is held.
    func process(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        if let decoder = contentDecoder {
            var paused = false
            let error = decoder.decode(bytes, stopping: { paused }) { piece in
                switch self.deliver(piece) {
                case .success(.proceed): return nil
                case .success(.pause): paused = true; return nil
                case .success(.stop): return CourierError(.cancelled, "the body handler stopped the transfer")
                case .success(.fail(let error)), .failure(let error): return error
                }
            }
            if let error { return error }
            if paused {
                heldBody.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - decoder.unconsumedInput)...]).bindMemory(to: UInt8.self))
                pause()
            }
            return nil
        }
        switch deliver(bytes) {
        case .success(.proceed): return nil
        case .success(.pause): pause(); return nil
        case .success(.stop): return CourierError(.cancelled, "the body handler stopped the transfer")
        case .success(.fail(let error)), .failure(let error): return error
        }
    }

    func pause() {
        guard !pausedByConsumer else { return }
        pausedByConsumer = true
        carrier?.pauseReadingForConsumer()
    }

    /// Whether body bytes wait for a paused consumer (then the response's end waits too).
    var isHoldingBody: Bool {
        pausedByConsumer && (!heldBody.isEmpty || (contentDecoder?.hasPendingOutput ?? false) || hasRefusedPiece)
    }

    /// Whether the consumer still has a piece it refused (curl's pause contract, kept by the front end).
    var hasRefusedPiece: Bool {
        switch _sink {
        case .stream(let sink): return sink.redeliver != nil
        case .fanOut: return true
        default: return false
        }
    }

    /// On resume: offers the consumer what it refused, then what was held, until it pauses
    /// again or all is delivered. Returns the consumer's or the decoder's error.
    func deliverHeldBody() -> CourierError? {
        guard pausedByConsumer else { return nil }
        let offered: BodyVerdict
        switch _sink {
        case .stream(let sink): offered = sink.redeliver?() ?? .proceed
        case .fanOut(let fan): offered = fan.redeliver()
        default: offered = .proceed
        }
        switch offered {
        case .proceed: break
        case .pause: return nil
        case .stop: return CourierError(.cancelled, "the body handler stopped the transfer")
        case .fail(let error): return error
        }
        pausedByConsumer = false
        guard !heldBody.isEmpty || (contentDecoder?.hasPendingOutput ?? false) else { return nil }
        let held = heldBody
        heldBody = []
        return held.withUnsafeBytes { process($0) }
    }

    func deliver(_ bytes: UnsafeRawBufferPointer) -> Result<BodyVerdict, CourierError> {
        metrics.bodyBytesDecoded &+= UInt64(bytes.count)
        switch _sink {
        case .memory:
            responseBody.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            return .success(.proceed)
        case .discard:
            return .success(.proceed)
        case .file(let file):
            _cacheExchange?.collect(bytes)
            return file.write(bytes).map { .failure($0) } ?? .success(.proceed)
        case .stream(let sink):
            _cacheExchange?.collect(bytes)
            if let landing = sink.landing, contentDecoder == nil {
                let taker = _cacheExchange == nil && !_reportsProgress ? sink.leaseTaker : nil
                carrier?.offerReadLanding(landing, leaseTaker: taker)
            }
            return .success(sink.deliver(bytes))
        case .fanOut(let fan):
            _cacheExchange?.collect(bytes)
            return fan.deliver(bytes)
        case .resumable(let download):
            return download.write(bytes).map { .failure($0) } ?? .success(.proceed)
        case .destination:
            // Resolved when the head arrived; a body without a final head cannot happen.
            return .success(.proceed)
        }
    }

    /// Body bytes a read lease took straight to the consumer (see `ReadLease`): counted as if
    /// they had come through `receiveBody`.
    func bodyReadElsewhere(_ count: UInt64) {
        metrics.bodyBytesReceived &+= count
        metrics.bodyBytesDecoded &+= count
        metrics.completedAt = monotonicNanos()
    }

    /// The response ended cleanly: finish content decoding.
    func completeBody() -> CourierError? {
        if discardsBody { return nil }
        if let decoder = contentDecoder, let error = decoder.finish() { return error }
        return nil
    }

    /// Request body bytes went out (the connection already counted them).
    func sentRequestBytes(_ count: Int, nowMillis: UInt64, isLast: Bool) {
        if reportsProgress, isLast || nowMillis &- lastProgressMillis >= progressIntervalMillis {
            lastProgressMillis = nowMillis
            delegate?.transferDidProgress(self)
        }
    }
}
