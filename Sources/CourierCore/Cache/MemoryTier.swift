/// The cache's memory tier: stored responses by primary key and variant, evicted least recently
/// used first when a byte budget or an entry count is exceeded.
///
/// Not thread-safe on its own: `ResponseCache` calls it under its lock, which is held for a
/// dictionary probe and a few pointer moves, never for I/O.
package struct MemoryTier {
    /// One variant, linked into the recency list (most recent at `newest`).
    private final class Node {
        let response: StoredResponse
        let cost: Int
        var older: Node?
        var newer: Node?

        init(_ response: StoredResponse) {
            self.response = response
            cost = response.memoryCost
        }
    }

    /// A primary key's variants, all under the same Vary names.
    private struct Slot {
        var key: String
        var varyNames: [String]
        var variants: [Node]
    }

    package var byteBudget: Int
    package var entryLimit: Int
    package private(set) var bytes = 0
    package private(set) var count = 0
    package private(set) var evictions = 0
    /// By the key's stable hash: a lookup hashes one integer, and a miss builds no key string.
    private var slots: [UInt64: Slot] = [:]
    private var newest: Node?
    private var oldest: Node?

    package init(byteBudget: Int, entryLimit: Int) {
        self.byteBudget = byteBudget
        self.entryLimit = entryLimit
    }

    /// The variant of `key` whose variant key `variantKey(varyNames)` computes, made the most
    /// recently used.
    package mutating func find(_ key: String, variantKey: ([String]) -> String) -> StoredResponse? {
        find(CacheKey.stableHash(key), key: { key }, variantKey: variantKey)
    }

    /// As `find(_:variantKey:)`, by the key's hash; `key` is asked for only when the hash matches.
    package mutating func find(_ hash: UInt64, key: () -> String, variantKey: ([String]) -> String) -> StoredResponse? {
        guard let slot = slots[hash], slot.key == key() else { return nil }
        let wanted = variantKey(slot.varyNames)
        guard let node = slot.variants.first(where: { $0.response.variantKey == wanted }) else { return nil }
        unlink(node)
        linkNewest(node)
        return node.response
    }

    /// Keeps `response`, replacing the variant it stands for; a response that alone exceeds the
    /// budget is not kept. Evicts the least recently used until within the limits.
    package mutating func insert(_ response: StoredResponse) {
        let node = Node(response)
        guard node.cost <= byteBudget, entryLimit > 0 else {
            remove(variant: response.variantKey, of: response.key)
            return
        }
        var slot = slots[response.keyHash] ?? Slot(key: response.key, varyNames: response.varyNames, variants: [])
        if slot.varyNames != response.varyNames || slot.key != response.key {
            // The origin changed what the resource varies on (or another key had this hash): the
            // old variants no longer apply.
            for old in slot.variants { drop(old) }
            slot = Slot(key: response.key, varyNames: response.varyNames, variants: [])
        }
        if let index = slot.variants.firstIndex(where: { $0.response.variantKey == response.variantKey }) {
            drop(slot.variants[index])
            slot.variants.remove(at: index)
        }
        slot.variants.append(node)
        slots[response.keyHash] = slot
        linkNewest(node)
        bytes += node.cost
        count += 1
        while bytes > byteBudget || count > entryLimit, let victim = oldest, victim !== node {
            remove(variant: victim.response.variantKey, of: victim.response.key)
            evictions += 1
        }
    }

    /// Forgets every variant of `key`.
    package mutating func remove(_ key: String) {
        let hash = CacheKey.stableHash(key)
        guard let slot = slots[hash], slot.key == key else { return }
        slots[hash] = nil
        for node in slot.variants { drop(node) }
    }

    /// Forgets one variant.
    package mutating func remove(variant: String, of key: String) {
        let hash = CacheKey.stableHash(key)
        guard var slot = slots[hash], slot.key == key,
              let index = slot.variants.firstIndex(where: { $0.response.variantKey == variant }) else { return }
        drop(slot.variants[index])
        slot.variants.remove(at: index)
        slots[hash] = slot.variants.isEmpty ? nil : slot
    }

    /// Forgets everything (the memory-pressure response).
    package mutating func removeAll() {
        // Unlink explicitly: a long chain of nodes released recursively could exhaust the stack.
        while let node = oldest { drop(node) }
        slots.removeAll()
    }

    private mutating func drop(_ node: Node) {
        unlink(node)
        bytes -= node.cost
        count -= 1
    }

    private mutating func unlink(_ node: Node) {
        if let newer = node.newer { newer.older = node.older } else if newest === node { newest = node.older }
        if let older = node.older { older.newer = node.newer } else if oldest === node { oldest = node.newer }
        node.older = nil
        node.newer = nil
    }

    private mutating func linkNewest(_ node: Node) {
        node.older = newest
        newest?.newer = node
        newest = node
        if oldest == nil { oldest = node }
    }
}
