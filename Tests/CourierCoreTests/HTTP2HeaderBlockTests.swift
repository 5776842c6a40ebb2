import Testing
@testable import CourierCore

/// A connection's received header block: fields gathered one by one, handed over as headers,
/// and the block ready for the next stream's.
@Suite("HTTP/2 header block")
struct HTTP2HeaderBlockTests {
    private func append(_ block: HTTP2HeaderBlock, _ name: String, _ value: String) {
        let name = Array(name.utf8), value = Array(value.utf8)
        name.withUnsafeBytes { n in value.withUnsafeBytes { v in block.append(name: n, value: v) } }
    }

    @Test func fieldsBecomeHeadersInOrderWithDuplicates() {
        let block = HTTP2HeaderBlock()
        append(block, "content-type", "text/plain")
        append(block, "set-cookie", "a=1")
        append(block, "set-cookie", "b=2")
        append(block, "x-empty", "")
        #expect(block.count == 4)
        let headers = block.take()
        #expect(headers.count == 4)
        #expect(headers["Content-Type"] == "text/plain")
        #expect(headers.values(for: "set-cookie") == ["a=1", "b=2"])
        #expect(headers.contains("x-empty") && headers["x-empty"] == "")
        #expect(headers.name(at: 3) == "x-empty")
        #expect(block.count == 0, "taking the block starts it again")
    }

    @Test func valuesLoseSurroundingSpacesAndTabsOnly() {
        let block = HTTP2HeaderBlock()
        append(block, "a", " \t inner  space \t")
        append(block, "b", "   ")
        let headers = block.take()
        #expect(headers["a"] == "inner  space")
        #expect(headers["b"] == "")
    }

    @Test func aClearedBlockForgetsItsFieldsAndTheNextOneIsItsOwn() {
        let block = HTTP2HeaderBlock()
        append(block, "first", "1")
        block.clear()
        #expect(block.count == 0)
        append(block, "second", "2")
        let one = block.take()
        append(block, "third", String(repeating: "x", count: 5_000))
        let two = block.take()
        #expect(one.count == 1 && one["second"] == "2" && one["first"] == nil)
        #expect(two.count == 1 && two["third"]?.count == 5_000, "the buffer grows past its first size")
        #expect(one["second"] == "2", "headers taken earlier keep their own bytes")
    }
}
