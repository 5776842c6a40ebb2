import CourierCore
import Glibc

/// Fuzz target: the content decoders (gzip, deflate, br, zstd) on a server's compressed body.
///
/// Input: byte 0 chooses the coding (low two bits) and a tight bound (bit 2: 4,000 bytes), bytes
/// 1-2 seed where the body is split and where the consumer pauses, the rest is the body.
///
/// Checked: decoding is split- and pause-invariant — the same bytes, or a failure, whether the
/// body comes whole to a consumer that never pauses or in pieces to one that pauses at random
/// (continuing with the unconsumed input, and draining pending output, as the transfer does);
/// nothing beyond the bound is ever handed over; and a success always ends the stream.
package enum ContentDecoding {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 3 else { return }
        let coding = ContentDecoder.Coding.allCases[Int(input[0] & 3)]
        let limit: UInt64 = input[0] & 4 != 0 ? 4_000 : 1 << 26
        var random = SplitRandom(seed: UInt64(input[1]) | UInt64(input[2]) << 8)
        let body = Array(input[3...])

        let whole = decode(coding, limit: limit, body, pieces: [body.count]) { false }
        var pieces: [Int] = []
        var left = body.count
        while left > 0 {
            let size = min(left, 1 + Int(random.next() % 97))
            pieces.append(size)
            left -= size
        }
        let paused = decode(coding, limit: limit, body, pieces: pieces) { random.next() % 3 == 0 }
        switch (whole, paused) {
        case (.success(let a), .success(let b)):
            precondition(a == b, "\(coding): pausing changed the decoded body")
        case (.failure(let a), .failure(let b)):
            // Which error may differ (a zstd checksum, read at the frame's end, can be overtaken
            // by the size bound when output leaves piece by piece), but only among these two.
            let expected: Set<CourierError.Code> = [.corruptEncoding, .decodedTooLarge]
            if a.code != b.code, !(expected.contains(a.code) && expected.contains(b.code)) {
                report("\(coding): pausing changed the error, \(a) against \(b)")
            }
        default:
            report("\(coding): whole \(describe(whole)) but in pieces \(describe(paused))")
        }
    }

    /// Says what went wrong on stderr (a release build's precondition message is empty), then traps.
    private static func report(_ problem: String) -> Never {
        _ = problem.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress!, $0.count - 1) }
        fatalError(problem)
    }

    private static func describe(_ result: Result<[UInt8], CourierError>) -> String {
        switch result {
        case .success(let bytes): return "\(bytes.count) bytes"
        case .failure(let error): return error.message
        }
    }

    /// Decodes `body` in `pieces` to a consumer that pauses when `pauses()` says so.
    private static func decode(_ coding: ContentDecoder.Coding, limit: UInt64, _ body: [UInt8], pieces: [Int],
                               pauses: () -> Bool) -> Result<[UInt8], CourierError> {
        let decoder = ContentDecoder.make(coding, limit: limit)
        var out: [UInt8] = []
        var start = 0
        for size in pieces {
            var remaining = body[start..<(start + size)]
            start += size
            var rounds = 0
            while !remaining.isEmpty || decoder.hasPendingOutput {
                rounds += 1
                precondition(rounds < 1_000_000, "\(coding): a decode that never finishes its input")
                var stopped = false
                let error = Array(remaining).withUnsafeBytes { bytes in
                    decoder.decode(bytes, stopping: { stopped }) { piece in
                        out.append(contentsOf: piece)
                        stopped = pauses()
                        return nil
                    }
                }
                if let error { return .failure(error) }
                precondition(UInt64(out.count) <= limit, "\(coding): more than the bound was handed over")
                remaining = remaining.suffix(stopped ? decoder.unconsumedInput : 0)
            }
        }
        if let error = decoder.finish() { return .failure(error) }
        return .success(out)
    }
}
