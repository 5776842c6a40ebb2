/// When the pieces of a rate-limited transfer may go, as a value (curl's `--limit-rate`): the
/// pieces of an upload, and on HTTP/2 the window a download's bytes reopen (HTTP/1's downloads
/// pause their reads through `ReceiveFlow`).
///
/// A piece goes when the bytes handed so far *and its own* are on schedule, so the upload's
/// average never exceeds the rate (counting only what was sent before let the last piece of a
/// short body out early: a body of a few pieces then averaged far above the rate).
package struct RatePacer: Equatable, Sendable {
    /// Bytes per second.
    package let limit: UInt64
    /// The bytes one piece should carry at most, so pieces go several times a second (a piece
    /// waits until its own bytes are on schedule).
    package var pieceSize: Int { Int(max(1024, min(limit / 8, 1 << 20))) }
    private var windowStart: UInt64 = 0
    /// When the held piece may go (loop clock); `.max` when none is held.
    package private(set) var resumeAt: UInt64 = .max

    package init(limit: UInt64) {
        precondition(limit > 0, "a send pacer without a rate")
        self.limit = limit
    }

    /// Whether a piece of `size` bytes may go at `now`, after `handed` bytes of the body; when it
    /// may not, it waits until `resumeAt`.
    package mutating func mayGo(size: Int, handed: UInt64, now: UInt64) -> Bool {
        if windowStart == 0 { windowStart = now }
        let due = windowStart &+ (handed &+ UInt64(size)) &* 1000 / limit
        guard due > now else { return true }
        resumeAt = due
        return false
    }

    /// The timer fired at `now`: true when the held piece may go.
    package mutating func timerFired(now: UInt64) -> Bool {
        guard now >= resumeAt else { return false }
        resumeAt = .max
        return true
    }
}
