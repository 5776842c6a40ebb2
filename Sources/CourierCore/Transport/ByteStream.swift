/// A bidirectional byte stream on the loop thread: the one interface HTTP/1 speaks through.
///
/// Modelled on curl's connection filters: `TCPStream` moves bytes through a socket, `TLSStream`
/// sits on a `TCPStream` and moves plaintext in and out while ciphertext crosses the socket. The
/// HTTP/1 connection neither knows nor asks which one it has.
///
/// Rules every stream keeps:
/// - events go to the delegate on the loop thread, possibly from inside a call into the stream
///   (`write` reporting a completed or failed write at once);
/// - after `close()` the delegate hears nothing more, so an owner may go away once it closed
///   its stream;
/// - bytes handed to `streamDidReceive` are valid only during the call (they live in the
///   shared read buffer).
package protocol ByteStream: AnyObject {
    /// Starts connecting (and handshaking); the outcome comes as `streamDidOpen` or
    /// `streamDidFailToOpen`.
    func open(delegate: ByteStreamDelegate)
    /// Sends `first` then `second` (one `writev` when the kernel takes both). Completion comes as
    /// `streamDidWrite`, a failure as `streamDidEnd(.failed)`. `final` marks the last write of a
    /// message: its completion is reported even when it carries no bytes.
    func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?, final: Bool)
    /// Whether earlier writes are still waiting for the socket to drain (a body producer waits
    /// for false before handing over the next piece, which bounds memory).
    var hasPendingWrites: Bool { get }
    /// What connecting took and found.
    var timings: ConnectTimings { get }
    /// Stops reading from the socket (a consumer that cannot keep up): the kernel's receive
    /// window fills and the server is slowed, instead of Courier buffering without bound. Bytes
    /// of a read already in progress are still delivered. Idempotent.
    func pauseReading()
    /// Reads again after `pauseReading`. Idempotent.
    func resumeReading()
    /// Closes the stream (TLS says close_notify first, best effort). Idempotent.
    func close()
    /// What TLS agreed on, nil for plain TCP (read on demand: `courier -v`).
    var tlsDetails: TLSDetails? { get }
    /// The certificates the server sent, leaf first, empty for plain TCP (read on demand: curl's
    /// `-w %{certs}`).
    var peerCertificates: [CertificateInfo] { get }
    /// This end's address (read on demand: curl's `-w %{local_ip}`), nil when not connected.
    var localAddress: SocketAddress? { get }
    /// Where reads may land instead of the loop's buffer (see `ReadLanding`): set by the
    /// connection for an exchange whose body goes undecoded to such a consumer, nil otherwise.
    var readLanding: ReadLanding? { get set }
    /// The socket, for lending its reads to a body's consumer (see `ReadLease`): nil unless the
    /// bytes on it are the plaintext (no TLS), it is open and reading, and nothing waits to be
    /// written.
    var leasableSocket: Int32? { get }
    /// Up to `count` bytes of the regular file `file`, from its offset, sent straight from the page
    /// cache (sendfile: no copy through memory of ours). Not reported to the delegate: the caller
    /// counts them and reports them as a write. Only between writes (nothing queued).
    func sendFile(_ file: Int32, count: Int) -> FileSend
}

/// What one `sendFile` did.
package enum FileSend: Equatable {
    /// That many bytes went (the file's offset moved as far).
    case sent(Int)
    /// The socket takes nothing now: send a piece the usual way (its completion is the wake).
    case full
    /// The file had no bytes left at its offset.
    case endOfFile
    /// This stream cannot (TLS, a write queued): send the usual way.
    case unavailable
    /// The socket failed (the stream reported it as it reports a failed write).
    case failed
}

extension ByteStream {
    package var tlsDetails: TLSDetails? { nil }
    package var peerCertificates: [CertificateInfo] { [] }
    package var localAddress: SocketAddress? { nil }
    package var leasableSocket: Int32? { nil }
    package func sendFile(_ file: Int32, count: Int) -> FileSend { .unavailable }
}

/// What a byte stream reports to its owner.
package protocol ByteStreamDelegate: AnyObject {
    /// The stream is open: connected, and for TLS handshaken with a peer that passed every check.
    func streamDidOpen()
    /// Opening failed (resolution, every address refused, handshake, verification).
    func streamDidFailToOpen(_ error: CourierError)
    /// Bytes arrived.
    func streamDidReceive(_ bytes: UnsafeRawBufferPointer)
    /// `count` bytes of earlier writes left; `final` when they complete a write marked final.
    func streamDidWrite(_ count: Int, final: Bool)
    /// No more bytes will arrive.
    func streamDidEnd(_ end: StreamEnd)
}

/// How a stream ended.
package enum StreamEnd: Equatable {
    /// The peer closed its side. `closeNotify` says whether TLS saw the peer's close_notify alert
    /// (nil for plain TCP, whose end can never be told from a cut).
    case closed(closeNotify: Bool?)
    /// The stream broke: a reset, a failed write, a record that does not decrypt.
    case failed(CourierError)
}

/// Connect-phase facts, copied into the metrics of the transfer a new connection serves first.
package struct ConnectTimings {
    package var dnsStart: UInt64 = 0
    package var dnsEnd: UInt64 = 0
    package var connectStart: UInt64 = 0
    package var connectEnd: UInt64 = 0
    package var tlsEnd: UInt64 = 0
    package var tlsResumed = false
    /// The first X509_V_* verification error seen, 0 when none.
    package var tlsVerifyResult: Int32 = 0
    /// The address connected to (formatted as "127.0.0.1:8080", "[::1]:443").
    package var remoteEndpoint = RemoteEndpoint()

    package init() {}
}
