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
    let decoder = ContentDecoder(coding: coding, limit: limit)
    var out: [UInt8] = []
    let size = max(1, data.count / pieces)
    var start = 0
    while start < data.count {
        let end = min(data.count, start + size)
        let error = data[start..<end].withUnsafeBytes { decoder.decode($0) { out.append(contentsOf: $0); return nil } }
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
        #expect(throws: CourierError.self) { try ContentDecoder.coding(for: "br").get() }
    }
}
