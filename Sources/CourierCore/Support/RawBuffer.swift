/// A growable byte buffer in manually managed memory, for bytes assembled and written at once.
///
/// The request head is built in one of these for every request. `Array<UInt8>.append(contentsOf:)`
/// goes through generic sequence machinery costing a few hundred instructions a call, several
/// times per request; this is a capacity check and a `memcpy`. One instance lives as long as the
/// runtime and is reused, so it never shrinks and never reallocates once warm.
package struct RawBuffer {
    package private(set) var base: UnsafeMutableRawPointer
    package private(set) var count = 0
    private var capacity: Int

    package init(capacity: Int) {
        self.capacity = max(64, capacity)
        base = .allocate(byteCount: self.capacity, alignment: 16)
    }

    /// Frees the memory; the buffer must not be used afterwards.
    package func free() { base.deallocate() }

    @inline(__always)
    package mutating func clear() { count = 0 }

    @inline(__always)
    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    package mutating func append(_ byte: UInt8) {
        reserve(1)
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always)
    package mutating func append(_ literal: StaticString) {
        append(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends a string's UTF-8 bytes (contiguous for native and small strings, so no copy loop).
    @inline(__always)
    package mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The bytes so far.
    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        grown.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }
}
