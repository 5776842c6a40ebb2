import CourierCore

/// Fuzz target: the decoder's side of a `ReadLease`. A response is decoded twice: once fed whole
/// (in input-chosen reads), once with parts of its Content-Length body read past the decoder at
/// input-chosen points (`lengthBodyLeft`, then `bodyReadElsewhere`), as a connection does when it
/// lends its reads to a body's consumer and takes them back.
///
/// Input: bytes 0-1 seed the reads and the parts read past; the rest is the wire.
///
/// Checked: both decodings agree — the same head, the same end (where the message ended and
/// whether the connection may be kept, or the same failure), the same body bytes counted — and
/// the body put together from what the decoder delivered and what was read past it, in order,
/// is the body of the whole decoding.
package enum LeasedBodyDecoding {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 2 else { return }
        let seed = UInt64(input[0]) | UInt64(input[1]) << 8
        let wire = Array(input[2...])
        let whole = decode(wire, seed: seed, readPast: false)
        let leased = decode(wire, seed: seed, readPast: true)
        precondition(whole == leased, "reading past the decoder changed the outcome: \(whole.summary) against \(leased.summary)")
    }

    struct Outcome: Equatable {
        var status = 0
        var body: [UInt8] = []
        var counted: UInt64 = 0
        /// Where in the wire the message ended, and the keep-alive verdict.
        var end: (Int, Bool)?
        var failure: CourierError.Code?

        static func == (a: Outcome, b: Outcome) -> Bool {
            a.status == b.status && a.body == b.body && a.counted == b.counted && a.end?.0 == b.end?.0
                && a.end?.1 == b.end?.1 && a.failure == b.failure
        }

        var summary: String {
            "status \(status), \(body.count) body bytes (\(counted) counted), end \(end.map { "\($0.0) keep \($0.1)" } ?? "-"), failure \(failure.map { "\($0.rawValue)" } ?? "-")"
        }
    }

    final class Collector: ResponseDecoderDelegate {
        var outcome = Outcome()

        func decoderDidReceiveHead(_ head: consuming ResponseHead, contentLength: UInt64?) -> CourierError? {
            outcome.status = head.status
            return nil
        }

        func decoderDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
            outcome.body += bytes
            return nil
        }
    }

    static func decode(_ wire: [UInt8], seed: UInt64, readPast: Bool) -> Outcome {
        var reads = SplitRandom(seed: seed)
        var skips = SplitRandom(seed: seed ^ 0x5EED)
        let decoder = ResponseDecoder()
        let collector = Collector()
        decoder.delegate = collector
        decoder.begin(expectsBody: true)
        var position = 0
        return wire.withUnsafeBytes { raw -> Outcome in
            while position < raw.count {
                let size = min(raw.count - position, 1 + Int(reads.next() % 96))
                let chunk = UnsafeRawBufferPointer(rebasing: raw[position..<(position + size)])
                switch decoder.feed(chunk) {
                case .needMore:
                    position += size
                case .complete(let consumed, let keepAlive):
                    collector.outcome.end = (position + consumed, keepAlive)
                    collector.outcome.counted = decoder.bodyBytes
                    return collector.outcome
                case .failed(let error):
                    collector.outcome.failure = error.code
                    return collector.outcome
                }
                // Between reads: sometimes a part of the body is read past the decoder, leaving
                // llhttp at least its last byte (as a lease's budget does).
                if readPast, let left = decoder.lengthBodyLeft, left > 1, position < raw.count, skips.next() % 3 == 0 {
                    let most = min(Int(left - 1), raw.count - position)
                    let taken = 1 + Int(skips.next() % UInt64(most))
                    collector.outcome.body += raw[position..<(position + taken)]
                    decoder.bodyReadElsewhere(UInt64(taken))
                    position += taken
                }
            }
            switch decoder.finish() {
            case .complete(_, let keepAlive):
                collector.outcome.end = (raw.count, keepAlive)
            case .failed(let error):
                collector.outcome.failure = error.code
            case .needMore:
                collector.outcome.failure = decoder.endOfStreamError().code
            }
            collector.outcome.counted = decoder.bodyBytes
            return collector.outcome
        }
    }
}
