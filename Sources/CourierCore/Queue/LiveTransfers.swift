/// Every transfer the loop accepted and has not finished, for cancel-by-predicate, deadline
/// sweeps and shutdown.
///
/// An intrusive doubly linked list through `Transfer.liveNext`/`livePrevious`: inserting and
/// removing are a few pointer stores, with no allocation and no hashing per request.
struct LiveTransfers {
    private(set) var head: Transfer?

    mutating func insert(_ transfer: Transfer) {
        transfer.liveNext = head
        head?.livePrevious = transfer
        transfer.livePrevious = nil
        head = transfer
    }

    /// Unlinks `transfer`; a transfer that was never inserted (refused on arrival) is left alone.
    mutating func remove(_ transfer: Transfer) {
        if let previous = transfer.livePrevious {
            previous.liveNext = transfer.liveNext
        } else if head === transfer {
            head = transfer.liveNext
        }
        transfer.liveNext?.livePrevious = transfer.livePrevious
        transfer.liveNext = nil
        transfer.livePrevious = nil
    }

    /// The transfers `predicate` selects, collected first so the caller may end them.
    func select(_ predicate: (Transfer) -> Bool) -> [Transfer] {
        var selected: [Transfer] = []
        var cursor = head
        while let transfer = cursor {
            cursor = transfer.liveNext
            if predicate(transfer) { selected.append(transfer) }
        }
        return selected
    }
}
