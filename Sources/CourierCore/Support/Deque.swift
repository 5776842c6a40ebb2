/// A first-in first-out ring buffer.
///
/// The standard library has no deque and Courier takes no package dependencies. Queues in the
/// scheduler and the pool push at the back and pop at the front on every request, so this keeps
/// both O(1) and, once warmed up, allocation-free (capacity only grows).
package struct Deque<Element> {
    private var storage: [Element?] = []
    private var head = 0
    package private(set) var count = 0

    package init() {}

    package var isEmpty: Bool { count == 0 }

    package var first: Element? { count == 0 ? nil : storage[head] }

    package mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    /// Puts an element in front of all others; used when work must keep its place in line
    /// (a request handed back by a connection that never sent it).
    package mutating func prepend(_ element: Element) {
        if count == storage.count { grow() }
        head = (head - 1 + storage.count) % storage.count
        storage[head] = element
        count += 1
    }

    package mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    /// Removes the first element matching `predicate`, keeping the order of the others.
    /// O(n): used only for cancellation, which is rare next to push and pop.
    @discardableResult
    package mutating func removeFirst(where predicate: (Element) -> Bool) -> Element? {
        for offset in 0..<count {
            let index = (head + offset) % storage.count
            guard let element = storage[index], predicate(element) else { continue }
            // Shift the elements behind it one place forward.
            var cursor = offset
            while cursor + 1 < count {
                storage[(head + cursor) % storage.count] = storage[(head + cursor + 1) % storage.count]
                cursor += 1
            }
            storage[(head + count - 1) % storage.count] = nil
            count -= 1
            return element
        }
        return nil
    }

    /// Removes every element matching `predicate` and returns them in queue order.
    package mutating func removeAll(where predicate: (Element) -> Bool) -> [Element] {
        var kept = Deque<Element>()
        var removed: [Element] = []
        while let element = popFirst() {
            if predicate(element) { removed.append(element) } else { kept.append(element) }
        }
        self = kept
        return removed
    }

    package func contains(where predicate: (Element) -> Bool) -> Bool {
        for offset in 0..<count where predicate(storage[(head + offset) % storage.count]!) { return true }
        return false
    }

    package var elements: [Element] {
        (0..<count).map { storage[(head + $0) % storage.count]! }
    }

    private mutating func grow() {
        let newCapacity = Swift.max(8, storage.count * 2)
        var newStorage = [Element?](repeating: nil, count: newCapacity)
        for offset in 0..<count { newStorage[offset] = storage[(head + offset) % storage.count] }
        storage = newStorage
        head = 0
    }
}
