/// What carries one transfer's exchange over the wire: an HTTP/1 connection today, an HTTP/2
/// stream next. The transfer and the executor speak to a carrier only through this, so the
/// cache, cookies, redirects, retries, uploads, downloads, resume, progress, metrics and the
/// outbox work over any wire unchanged.
///
/// The other half of the interface is the transfer's (`Transfer+Exchange.swift`): a carrier reads
/// the request there (method, target, fields, body and its framing), hands up what arrives
/// (`receiveHead`, `receiveBody`, `completeBody`, trailers) and counts what it sent
/// (`requestBytesSent`); how the exchange ended goes to the carrier's owner, which tells the
/// transfer's machine. Everything runs on the loop thread.
package protocol ExchangeCarrier: AnyObject {
    /// The connection's number (curl's `Connection #N` in `-v`), shared by a connection's streams.
    var connectionID: UInt64 { get }
    /// Abandons the exchange in flight with `error` (cancellation, a deadline the owner tracks);
    /// the owner then hears that it ended.
    func abort(_ error: CourierError)
    /// The transfer's consumer cannot take more: stop reading for this exchange (the server is
    /// slowed by the transport's window instead of Courier buffering without bound).
    func pauseReadingForConsumer()
    /// The consumer can take more: deliver what was held, finish a response that completed
    /// meanwhile, or read again.
    func resumeReadingForConsumer()
    /// The exchange's body consumer keeps pieces in memory of its own: reads may land there (see
    /// `ReadLanding`), and `leaseTaker`, when given, may take the reads themselves (see
    /// `ReadLease`). Called with every piece delivered to such a consumer; a carrier that cannot
    /// do either ignores it.
    func offerReadLanding(_ landing: ReadLanding, leaseTaker: ReadLeaseTaker?)
    /// What opening the connection did, when the request that opened it asked (`-v`).
    var trace: ConnectionTrace? { get }
    /// What TLS agreed on (nil for plain TCP), read now.
    var tlsDetails: TLSDetails? { get }
    /// The certificates the server sent, leaf first (empty for plain TCP), read now.
    var peerCertificates: [CertificateInfo] { get }
    /// This end's address, asked of the socket now.
    var localAddress: SocketAddress? { get }
}
