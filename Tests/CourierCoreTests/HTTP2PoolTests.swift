import CNGHTTP2
import Testing

/// The allocator an HTTP/2 session hands nghttp2 (CNGHTTP2's shim), as nghttp2 calls it: blocks
/// by size class, reused last in first out, the large ones straight from malloc, realloc and
/// calloc with C's meaning, and a bound on what is kept.
@Suite("HTTP/2 session allocator")
struct HTTP2PoolTests {
    final class Pool {
        let pool = courier_h2_pool_new()!
        var user: UnsafeMutableRawPointer { UnsafeMutableRawPointer(pool) }
        func malloc(_ size: Int) -> UnsafeMutableRawPointer? { courier_h2_malloc(size, user) }
        func free(_ pointer: UnsafeMutableRawPointer?) { courier_h2_free(pointer, user) }
        func kept(_ index: Int) -> UInt32 { withUnsafeBytes(of: pool.pointee.kept) { $0.load(fromByteOffset: index * 4, as: UInt32.self) } }
        deinit { courier_h2_pool_free(pool) }
    }

    @Test func blocksComeInClassesAndLargeOnesAsAsked() throws {
        let pool = Pool()
        for (size, capacity) in [(0, 32), (1, 32), (32, 32), (33, 64), (64, 64), (65, 128), (4095, 4096), (4096, 4096),
                                 (4097, 4097), (100_000, 100_000)] {
            let block = try #require(pool.malloc(size))
            #expect(courier_h2_capacity(block) == capacity, "size \(size)")
            memset(block, 0xAB, capacity)
            pool.free(block)
        }
        #expect(pool.kept(0) == 1 && pool.kept(7) == 1, "one block kept per class used; the large ones went back")
    }

    @Test func aFreedBlockIsHandedOutAgain() throws {
        let pool = Pool()
        let first = try #require(pool.malloc(100))
        let second = try #require(pool.malloc(120))
        pool.free(first)
        pool.free(second)
        #expect(pool.malloc(128) == second && pool.malloc(65) == first)
        #expect(pool.malloc(100) != first, "a new block once the list is empty")
    }

    @Test func reallocAndCallocKeepCsMeaning() throws {
        let pool = Pool()
        let user = pool.user
        let small = try #require(courier_h2_realloc(nil, 20, user))
        memset(small, 7, 20)
        #expect(courier_h2_realloc(small, 30, user) == small, "room in its class: the same block")
        let grown = try #require(courier_h2_realloc(small, 5000, user))
        #expect(grown != small && courier_h2_capacity(grown) == 5000)
        #expect((0..<20).allSatisfy { grown.load(fromByteOffset: $0, as: UInt8.self) == 7 }, "the bytes moved")
        #expect(courier_h2_realloc(grown, 0, user) == nil, "size 0 frees")
        // A block kept dirty comes back zeroed through calloc.
        let dirty = try #require(pool.malloc(64))
        memset(dirty, 0xFF, 64)
        pool.free(dirty)
        let zeroed = try #require(courier_h2_calloc(8, 8, user))
        #expect(zeroed == dirty && (0..<64).allSatisfy { zeroed.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        #expect(courier_h2_calloc(Int.max / 2, 4, user) == nil, "a count times size past SIZE_MAX")
        pool.free(zeroed)
    }

    @Test func whatIsKeptIsBounded() throws {
        let pool = Pool()
        let small = try (0..<3000).map { _ in try #require(pool.malloc(16)) }
        small.forEach(pool.free)
        let large = try (0..<40).map { _ in try #require(pool.malloc(4000)) }
        large.forEach(pool.free)
        // At most COURIER_H2_KEPT_BYTES of each class; the rest went back to the system.
        #expect(pool.kept(0) == UInt32(COURIER_H2_KEPT_BYTES / 32) && pool.kept(7) == UInt32(COURIER_H2_KEPT_BYTES / 4096))
    }
}
