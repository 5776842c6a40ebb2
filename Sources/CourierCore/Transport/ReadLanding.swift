/// A body consumer that takes socket reads straight into its own memory.
///
/// Why: a consumer that keeps body bytes for another thread (the C ABI's body reader, behind
/// Python's `iter_bytes`) would otherwise copy every piece out of the loop's read buffer, which
/// the next read reuses. Offered a landing, the stream reads into the consumer's buffer instead,
/// the parser reads the bytes there, and the consumer finds each body piece already in place:
/// one copy of every body byte fewer.
///
/// The contract, all on the loop thread: the stream asks for a zone just before a read (nil:
/// the loop's own buffer), reads into it and hands the bytes up as from any read — headers,
/// chunk framing, another exchange's bytes may be among them; only what reaches the consumer
/// counts — then says `landed`. The zone's memory stays the consumer's and valid, untouched by
/// it apart from its own deliveries, from `landingZone` until `landed`.
package protocol ReadLanding: AnyObject {
    /// Where the next read may go, or nil for the loop's buffer. At most one zone at a time.
    func landingZone() -> UnsafeMutableRawBufferPointer?
    /// The read into the last zone has been processed: every piece of it was delivered, held
    /// elsewhere or dropped.
    func landed()
}
