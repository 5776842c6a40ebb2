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
///
/// A consumer that keeps pieces as `[UInt8]` (the Swift `AsyncSequence`) cannot lend memory an
/// array could be made of without a copy; it asks instead for reads into arrays the stream makes
/// (`readArrayCapacity`): the stream gives the consumer the array (`arrayArrived`) before the
/// bytes go up, and a piece that is the whole array can be kept as it is.
package protocol ReadLanding: AnyObject {
    /// Where the next read may go, or nil for the loop's buffer. At most one zone at a time.
    func landingZone() -> UnsafeMutableRawBufferPointer?
    /// The read into the last zone (or array) has been processed: every piece of it was
    /// delivered, held elsewhere or dropped.
    func landed()
    /// The most a read into an array may take; 0 (the default): no array reads.
    var readArrayCapacity: Int { get }
    /// The array the read about to be delivered went into (its pieces lie in its storage).
    func arrayArrived(_ array: [UInt8])
}

extension ReadLanding {
    package var readArrayCapacity: Int { 0 }
    package func arrayArrived(_ array: [UInt8]) {}
}
