/// A bidirectional byte stream on the loop thread: the one interface HTTP/1 speaks through.
///
/// Streams stack as curl's connection filters do, each over the one below (`StreamStack` builds
/// them): `SocketStream` moves bytes through a socket that an `AddressRacer` dialled,
/// `TunnelStream` opens a proxy's CONNECT tunnel and then passes bytes through, `TLSStream`
/// moves plaintext in and out while ciphertext crosses the stream below it. The HTTP/1
/// connection neither knows nor asks which stack it has.
///
/// Rules every stream keeps:
/// - events go to the delegate on the loop thread, possibly from inside a call into the stream
///   (`write` reporting a completed or failed write at once);
/// - each `write` is reported once (`streamDidWrite`, with its byte count), in the order made;
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
    /// Stops reading from the socket (a consumer that cannot keep up): the kernel's receive
    /// window fills and the server is slowed, instead of Courier buffering without bound. Bytes
    /// of a read already in progress are still delivered. Idempotent.
    func pauseReading()
    /// Reads again after `pauseReading`. Idempotent.
    func resumeReading()
    /// Tells an open stream's events to `delegate` from now on: a connection that negotiated
    /// another protocol hands its stream to the connection that speaks it.
    func handOver(to delegate: ByteStreamDelegate)
    /// Closes the stream (TLS says close_notify first, best effort). Idempotent.
    func close()
    /// Where reads may land instead of the loop's buffer (see `ReadLanding`): set by the
    /// connection for an exchange whose body goes undecoded to such a consumer, nil otherwise.
    var readLanding: ReadLanding? { get set }
    /// What the stack knows beyond its bytes (one query: each layer adds its part to the one
    /// below's). Asked on demand, never per read or write.
    var facts: StreamFacts { get }
}

/// What a stream stack knows beyond its bytes.
package struct StreamFacts {
    /// What connecting took and found (copied into the metrics of the transfer a new
    /// connection serves first).
    package var timings = ConnectTimings()
    /// The TLS session once its handshake is done; nil for plain TCP.
    package var tls: TLSSession?
    /// The socket at the bottom of the stack.
    package var socket: SocketStream?
    /// Whether the socket's bytes are the stream's own (no TLS above it): only then may a body go
    /// out with sendfile or its reads be lent to a consumer.
    package var bytesAreOnSocket = true

    package init() {}

    /// The socket, when its bytes are the stream's.
    package var plainSocket: SocketStream? { bytesAreOnSocket ? socket : nil }
}

extension ByteStream {
    /// What TLS agreed on, nil for plain TCP (`courier -v`).
    package var tlsDetails: TLSDetails? { facts.tls?.details }
    /// The certificates the server sent, leaf first, empty for plain TCP (curl's `-w %{certs}`).
    package var peerCertificates: [CertificateInfo] { facts.tls?.peerCertificateInfo ?? [] }
    /// This end's address (curl's `-w %{local_ip}`), nil when not connected.
    package var localAddress: SocketAddress? { facts.socket?.localAddress }
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
