/// A map from nonzero integers to values: linear probing over a power-of-two array, removal
/// shifting the later entries of a probe run back (no tombstones). Loop thread only, like its
/// users.
///
/// Why not a Dictionary: hashing an integer through `Hasher` (SipHash) and the generic code
/// around it cost more than the work done under the lookup. An HTTP/2 connection keeps its open
/// streams here (an insert, a removal and a few lookups a request: about 480 instructions of S6's
/// 61,500 went to the Dictionary). Keys come spread already (stream ids differ in their low
/// bits); 0 marks an empty slot. (`FlightTable` does the same for the flights of identical
/// requests with its own unowned slots: moved onto this type, the plain request path compiled
/// differently and the C ABI's counting mode rose by four instructions a request.)
package struct IntTable<Value> {
    private var keys: [Int]
    private var values: [Value?]
    package private(set) var count = 0

    package init() {
        keys = [Int](repeating: 0, count: 16)
        values = [Value?](repeating: nil, count: 16)
    }

    package var isEmpty: Bool { count == 0 }

    @inline(__always)
    private var mask: Int { keys.count &- 1 }

    /// The slot where `key`'s probe run starts.
    @inline(__always)
    private static func home(_ key: Int, _ mask: Int) -> Int { (key ^ (key >> 1)) & mask }

    /// The slot holding `key`, nil when absent.
    @inline(__always)
    private func slot(of key: Int) -> Int? {
        let mask = self.mask
        var index = Self.home(key, mask)
        while keys[index] != 0 {
            if keys[index] == key { return index }
            index = (index &+ 1) & mask
        }
        return nil
    }

    /// The value under `key`.
    @inline(__always)
    package func find(_ key: Int) -> Value? {
        slot(of: key).flatMap { values[$0] }
    }

    /// Adds `value` under `key`; false (and nothing changed) when the key is taken.
    @discardableResult
    package mutating func insert(_ value: Value, for key: Int) -> Bool {
        precondition(key != 0, "IntTable keys are nonzero")
        if (count &+ 1) &* 2 > keys.count { grow() }
        let mask = self.mask
        var index = Self.home(key, mask)
        while keys[index] != 0 {
            if keys[index] == key { return false }
            index = (index &+ 1) & mask
        }
        keys[index] = key
        values[index] = value
        count &+= 1
        return true
    }

    /// Takes `key` out; its value, nil when it was absent.
    @discardableResult
    package mutating func remove(_ key: Int) -> Value? {
        guard let index = slot(of: key) else { return nil }
        let removed = values[index]
        let mask = self.mask
        var hole = index
        var next = (hole &+ 1) & mask
        while keys[next] != 0 {
            let home = Self.home(keys[next], mask)
            // An entry may fill the hole unless its home lies cyclically in (hole, next].
            let between = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next)
            if !between {
                keys[hole] = keys[next]
                values[hole] = values[next]
                hole = next
            }
            next = (next &+ 1) & mask
        }
        keys[hole] = 0
        values[hole] = nil
        count &-= 1
        return removed
    }

    /// Every value, in no particular order.
    package var allValues: [Value] { values.compactMap { $0 } }

    /// Calls `body` with every value, in no particular order (no array made).
    package func forEach(_ body: (Value) throws -> Void) rethrows {
        for case let value? in values { try body(value) }
    }

    package mutating func removeAll() {
        self = IntTable()
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldValues = values
        keys = [Int](repeating: 0, count: oldKeys.count * 2)
        values = [Value?](repeating: nil, count: oldKeys.count * 2)
        count = 0
        for index in oldKeys.indices where oldKeys[index] != 0 {
            insert(oldValues[index]!, for: oldKeys[index])
        }
    }
}
