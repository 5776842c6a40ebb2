import Glibc

/// One buffer of the pipe: raw memory (its address must not move while a read lands in it,
/// which an array's storage does not promise), allocated once and reused for the whole body; or a
/// waiting reader's own memory, borrowed (never freed here).
struct PipeBuffer {
    private(set) var base: UnsafeMutableRawPointer?
    var count = 0
    private(set) var capacity = 0

    init() {}

    /// A view of memory someone else owns (`free` must not be called on it).
    init(borrowing base: UnsafeMutableRawPointer, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    mutating func allocate(_ size: Int) {
        base = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
        capacity = size
        count = 0
    }

    mutating func free() {
        base?.deallocate()
        base = nil
        capacity = 0
        count = 0
    }

    /// Whether `count` bytes at `address` lie inside this buffer (a read that landed here).
    func holds(_ address: UnsafeRawPointer, _ count: Int) -> Bool {
        guard let base else { return false }
        return address >= UnsafeRawPointer(base) && address + count <= UnsafeRawPointer(base) + capacity
    }

    /// Appends `count` bytes from `source`: a move inside the buffer when they are already here
    /// (nothing at all when they are already at the end), a copy otherwise (there must be room).
    mutating func append(_ source: UnsafeRawPointer, _ count: Int) {
        let end = base! + self.count
        if UnsafeRawPointer(end) != source { memmove(end, source, count) }
        self.count += count
    }
}
