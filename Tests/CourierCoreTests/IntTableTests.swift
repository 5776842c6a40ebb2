import CourierFuzzing
import Testing
@testable import CourierCore

/// The integer-keyed table under an HTTP/2 connection's streams, without sockets:
/// each operation, probe runs that wrap around the end, removal shifting entries back, growth, and
/// a long random sequence checked against a Dictionary.
@Suite("IntTable")
struct IntTableTests {
    @Test func insertFindAndRemove() {
        var table = IntTable<String>()
        let removedFromEmpty = table.remove(1)
        #expect(table.isEmpty && table.find(1) == nil && removedFromEmpty == nil)
        let first = table.insert("one", for: 1)
        let taken = table.insert("again", for: 1)
        #expect(first && !taken, "a taken key")
        #expect(table.find(1) == "one" && table.count == 1)
        let negative = table.insert("minus", for: -7)
        #expect(negative && table.find(-7) == "minus")
        let removed = table.remove(1)
        #expect(removed == "one" && table.find(1) == nil && table.count == 1)
        let again = table.remove(1)
        #expect(again == nil)
        #expect(table.allValues == ["minus"])
    }

    @Test func removalKeepsEveryOtherKeyOfAProbeRunReachable() {
        // In a 16-slot table (eight keys fit before it grows) 10, 21 and 42 all start at the last
        // slot, so their run wraps to the first ones, where 31, 30 and 1 start too; 15 and 47
        // share a run in the middle.
        let keys = [10, 21, 42, 31, 15, 47, 30, 1]
        var table = IntTable<Int>()
        for key in keys { table.insert(key * 10, for: key) }
        for (position, removed) in keys.enumerated() {
            let value = table.remove(removed)
            #expect(value == removed * 10)
            for kept in keys[(position + 1)...] { #expect(table.find(kept) == kept * 10, "\(kept) after removing \(removed)") }
            #expect(table.find(removed) == nil)
        }
        #expect(table.isEmpty)
    }

    @Test func growsAndKeepsEverything() {
        var table = IntTable<Int>()
        for id in stride(from: 1, through: 1999, by: 2) { table.insert(id, for: id) }
        #expect(table.count == 1000)
        for id in stride(from: 1, through: 1999, by: 2) { #expect(table.find(id) == id) }
        var sum = 0
        table.forEach { sum += $0 }
        #expect(sum == 1_000_000)
        table.removeAll()
        #expect(table.isEmpty && table.find(1) == nil)
    }

    @Test func behavesAsADictionaryOverARandomSequence() {
        var table = IntTable<Int>()
        var reference: [Int: Int] = [:]
        var generator = SplitRandom(seed: 42)
        for step in 0..<20_000 {
            let key = Int(generator.next() % 257) - 128
            guard key != 0 else { continue }
            switch generator.next() % 3 {
            case 0:
                let added = table.insert(step, for: key)
                #expect(added == (reference[key] == nil))
                if added { reference[key] = step }
            case 1:
                let value = table.remove(key)
                #expect(value == reference.removeValue(forKey: key))
            default:
                #expect(table.find(key) == reference[key])
            }
            #expect(table.count == reference.count)
        }
        #expect(table.allValues.sorted() == reference.values.sorted())
    }
}
