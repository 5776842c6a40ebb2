import Foundation
import Testing
import CZlib
@testable import CourierCore

/// Compresses with zlib itself: gzip (windowBits 31), zlib (15) or raw deflate (-15).
func compress(_ input: [UInt8], windowBits: Int32) -> [UInt8] {
    var stream = z_stream()
    deflateInit2_(&stream, 9, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 64)
    var input = input
    let produced: Int = input.withUnsafeMutableBufferPointer { inBuf in
        output.withUnsafeMutableBufferPointer { outBuf in
            stream.next_in = inBuf.baseAddress
            stream.avail_in = uInt(inBuf.count)
            stream.next_out = outBuf.baseAddress
            stream.avail_out = uInt(outBuf.count)
            deflate(&stream, Z_FINISH)
            return outBuf.count - Int(stream.avail_out)
        }
    }
    deflateEnd(&stream)
    return Array(output[..<produced])
}

func inflateAll(_ coding: ContentDecoder.Coding, _ data: [UInt8], limit: UInt64 = 1 << 30, pieces: Int = 1) -> Result<[UInt8], CourierError> {
    let decoder = ContentDecoder.make(coding, limit: limit)
    var out: [UInt8] = []
    let size = max(1, data.count / pieces)
    var start = 0
    while start < data.count {
        let end = min(data.count, start + size)
        let error = data[start..<end].withUnsafeBytes { bytes -> CourierError? in decoder.decode(bytes) { out.append(contentsOf: $0); return nil } }
        if let error { return .failure(error) }
        start = end
    }
    if let error = decoder.finish() { return .failure(error) }
    return .success(out)
}

@Suite("ContentDecoder")
struct ContentDecoderTests {
    let text = Array((0..<20_000).map { "line \($0) of a compressible body\n" }.joined().utf8)

    @Test(arguments: [1, 7, 1000])
    func gzipZlibAndRawDeflate(pieces: Int) throws {
        #expect(try inflateAll(.gzip, compress(text, windowBits: 31), pieces: pieces).get() == text)
        #expect(try inflateAll(.deflate, compress(text, windowBits: 15), pieces: pieces).get() == text)
        #expect(try inflateAll(.deflate, compress(text, windowBits: -15), pieces: pieces).get() == text)
    }

    @Test func concatenatedGzipMembers() throws {
        let two = compress(Array("first ".utf8), windowBits: 31) + compress(Array("second".utf8), windowBits: 31)
        #expect(try inflateAll(.gzip, two).get() == Array("first second".utf8))
    }

    @Test func bombIsStoppedAtTheLimit() {
        let zeros = [UInt8](repeating: 0, count: 50_000_000)
        let bomb = compress(zeros, windowBits: 31)
        #expect(bomb.count < 100_000)
        if case .failure(let error) = inflateAll(.gzip, bomb, limit: 1_000_000) {
            #expect(error.code == .decodedTooLarge)
        } else {
            Issue.record("bomb decoded")
        }
    }

    @Test func corruptAndTruncatedStreams() {
        var gz = compress(text, windowBits: 31)
        let truncated = Array(gz[..<(gz.count / 2)])
        if case .failure(let error) = inflateAll(.gzip, truncated) { #expect(error.code == .corruptEncoding) } else { Issue.record("truncated accepted") }
        gz[20] ^= 0xff
        gz[21] ^= 0xff
        if case .failure(let error) = inflateAll(.gzip, gz) { #expect(error.code == .corruptEncoding) } else { Issue.record("corrupt accepted") }
        if case .failure(let error) = inflateAll(.gzip, Array("not gzip at all".utf8)) { #expect(error.code == .corruptEncoding) } else { Issue.record("garbage accepted") }
    }

    @Test func codingNames() throws {
        #expect(try ContentDecoder.coding(for: nil).get() == nil)
        #expect(try ContentDecoder.coding(for: "identity").get() == nil)
        #expect(try ContentDecoder.coding(for: " GZIP ").get() == .gzip)
        #expect(try ContentDecoder.coding(for: "x-gzip").get() == .gzip)
        #expect(try ContentDecoder.coding(for: "deflate").get() == .deflate)
        #expect(try ContentDecoder.coding(for: "br").get() == .brotli)
        #expect(try ContentDecoder.coding(for: "ZSTD").get() == .zstd)
        for unknown in ["compress", "gzip, br", "sdch"] {
            #expect(throws: CourierError.self) { try ContentDecoder.coding(for: unknown).get() }
            if case .failure(let error) = ContentDecoder.coding(for: unknown) {
                #expect(error.code == .unsupportedEncoding && error.message.contains("unsupported"), "\(error.message)")
            }
        }
    }
}

/// br and zstd, from fixtures made with the reference encoders (Tests/Fixtures/codings): the same
/// pieces, bound and errors as gzip. hello.zst carries zstd's checksum: without one a flipped byte
/// can decode to other bytes undetected (brotli and gzip always check).
@Suite("ContentDecoder: br and zstd")
struct BrotliAndZstdTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/codings")

    func fixture(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    /// Decodes with a consumer that pauses after every piece, continuing as the transfer does
    /// (the unconsumed input again, or nothing when output is pending).
    func decodePausing(_ coding: ContentDecoder.Coding, _ data: [UInt8], limit: UInt64 = 1 << 30) -> Result<[UInt8], CourierError> {
        let decoder = ContentDecoder.make(coding, limit: limit)
        var out: [UInt8] = []
        var remaining = data[...]
        for _ in 0..<100_000 {
            var paused = false
            let error = Array(remaining).withUnsafeBytes { bytes in
                decoder.decode(bytes, stopping: { paused }) { piece in
                    out.append(contentsOf: piece)
                    paused = true
                    return nil
                }
            }
            if let error { return .failure(error) }
            remaining = remaining.suffix(paused ? decoder.unconsumedInput : 0)
            if remaining.isEmpty, !decoder.hasPendingOutput { break }
        }
        if let error = decoder.finish() { return .failure(error) }
        return .success(out)
    }

    @Test(arguments: [ContentDecoder.Coding.brotli, .zstd], [1, 3, 40])
    func decodesInPieces(coding: ContentDecoder.Coding, pieces: Int) throws {
        let text = try fixture("hello.txt")
        let encoded = try fixture(coding == .brotli ? "hello.br" : "hello.zst")
        #expect(try inflateAll(coding, encoded, pieces: pieces).get() == text)
    }

    @Test(arguments: [ContentDecoder.Coding.brotli, .zstd])
    func bombsStopAtTheLimit(coding: ContentDecoder.Coding) throws {
        let bomb = try fixture(coding == .brotli ? "bomb.br" : "bomb.zst")
        #expect(bomb.count < 4096, "64 MiB of zeros in \(bomb.count) bytes")
        guard case .failure(let error) = inflateAll(coding, bomb, limit: 1_000_000) else { Issue.record("bomb decoded"); return }
        #expect(error.code == .decodedTooLarge)
    }

    @Test(arguments: [ContentDecoder.Coding.brotli, .zstd, .gzip])
    func aPausingConsumerGetsEveryByte(coding: ContentDecoder.Coding) throws {
        let bomb = coding == .gzip ? compress([UInt8](repeating: 0, count: 64 << 20), windowBits: 31)
            : try fixture(coding == .brotli ? "bomb.br" : "bomb.zst")
        let decoded = try decodePausing(coding, bomb).get()
        #expect(decoded.count == 64 << 20 && !decoded.contains { $0 != 0 })
    }

    @Test func corruptTruncatedAndTrailingData() throws {
        for (coding, name) in [(ContentDecoder.Coding.brotli, "hello.br"), (.zstd, "hello.zst")] {
            let good = try fixture(name)
            var flipped = good
            flipped[good.count / 2] ^= 0xff
            flipped[good.count / 2 + 1] ^= 0x55
            let cases: [(String, [UInt8])] = [("truncated", Array(good.prefix(good.count - 5))), ("corrupt", flipped),
                                              ("garbage", Array("not compressed at all".utf8)), ("empty", [])]
            for (what, bytes) in cases {
                guard case .failure(let error) = inflateAll(coding, bytes) else { Issue.record("\(coding) \(what) accepted"); continue }
                #expect(error.code == .corruptEncoding, "\(coding) \(what): \(error.message)")
            }
        }
        guard case .failure(let trailing) = inflateAll(.brotli, try fixture("hello.br") + [1, 2, 3]) else { Issue.record("trailing bytes accepted"); return }
        #expect(trailing.code == .corruptEncoding)
    }

    @Test func concatenatedZstdFramesAreOneBody() throws {
        let frame = try fixture("hello.zst")
        #expect(try inflateAll(.zstd, frame + frame).get() == (try fixture("hello.txt")) + (try fixture("hello.txt")))
    }

    @Test func aZstdWindowBeyondEightMebibytesIsRefused() throws {
        guard case .failure(let error) = inflateAll(.zstd, try fixture("wide-window.zst")) else { Issue.record("a 16 MiB window was accepted"); return }
        #expect(error.code == .corruptEncoding && error.message.contains("zstd"), "\(error.message)")
    }
}
