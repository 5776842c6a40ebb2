import CourierCore

extension BodyStream {
    /// A request body produced by an `AsyncSequence` of byte chunks, read one chunk ahead of the
    /// socket: the next chunk is asked for when the previous one is handed to the connection and
    /// no further until that one is taken, so a producer is paced by the network and at most two
    /// chunks are held. With `length` the
    /// body goes out with Content-Length (and must produce exactly that many bytes); without it,
    /// chunked. The sequence is iterated once, so the request cannot be replayed or redirected
    /// with its body (307/308).
    public convenience init<S: AsyncSequence & Sendable>(_ sequence: S, length: UInt64? = nil) where S.Element == [UInt8] {
        self.init(length: length, replayable: false) { AsyncBodySource(sequence, length: length) }
    }
}

/// Reads an async sequence for a connection on the loop thread: `read` answers `.pending` while a
/// task fetches the next chunk, and the task hands it to the loop, which wakes the connection.
final class AsyncBodySource<S: AsyncSequence & Sendable>: BodySource, @unchecked Sendable where S.Element == [UInt8] {
    /// The iterator, used by one fetching task at a time.
    private final class IteratorBox: @unchecked Sendable {
        var iterator: S.AsyncIterator
        init(_ iterator: S.AsyncIterator) { self.iterator = iterator }
    }

    private let box: IteratorBox
    private let length: UInt64?
    // Loop-thread state.
    private var ready: [UInt8]?
    private var ended = false
    private var failure: CourierError?
    private var fetching: Task<Void, Never>?
    private var produced: UInt64 = 0
    private var closed = false
    /// The piece that completed a declared length, held until the sequence confirms its end (a
    /// producer that goes on past its length fails instead of being cut silently).
    private var lastPiece: [UInt8]?
    var wake: (() -> Void)?

    init(_ sequence: S, length: UInt64?) {
        box = IteratorBox(sequence.makeAsyncIterator())
        self.length = length
    }

    func read() -> BodyRead {
        if let failure { return .failed(failure) }
        if let piece = ready {
            ready = nil
            // The producer makes the next chunk while this one goes out.
            if !ended, fetching == nil { fetch() }
            return .array(piece)
        }
        if lastPiece != nil { return .pending }
        if ended {
            if let length, produced != length {
                return .failed(CourierError(.bodySource, "the stream produced \(produced) bytes of the \(length) announced"))
            }
            return .end
        }
        if fetching == nil { fetch() }
        return .pending
    }

    private func fetch() {
        let box = self.box
        fetching = Task { [self] in
            let outcome: Result<[UInt8]?, CourierError>
            do {
                outcome = .success(try await box.iterator.next())
            } catch let error as CourierError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(CourierError(.bodySource, "\(error)"))
            }
            Runtime.shared.execute { [self] in self.arrived(outcome) }
        }
    }

    /// On the loop thread: the fetched chunk (nil at the end).
    private func arrived(_ outcome: Result<[UInt8]?, CourierError>) {
        fetching = nil
        guard !closed else { return }
        switch outcome {
        case .success(let piece?):
            produced += UInt64(piece.count)
            if let length, produced > length {
                failure = CourierError(.bodySource, "the stream produced more than the \(length) bytes announced")
            } else if let length, produced == length, !piece.isEmpty {
                lastPiece = piece
                fetch()
                return
            } else {
                ready = piece
            }
        case .success(nil):
            ended = true
            ready = lastPiece
            lastPiece = nil
        case .failure(let error):
            failure = error
        }
        wake?()
    }

    func close() {
        closed = true
        fetching?.cancel()
        fetching = nil
        wake = nil
        ready = nil
    }
}
