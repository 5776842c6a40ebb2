/// The opening exchange of a tunnel through a proxy, as a pure value: `TunnelStream` runs it on
/// the stream to the proxy, and once it says `.established` passes bytes through untouched.
///
/// Two kinds exist: an HTTP proxy's CONNECT (`TunnelHandshake`) and SOCKS5's greeting, optional
/// login and CONNECT (`SocksHandshake`). Every step is bytes in, a `TunnelStep` out.
package protocol ProxyHandshake {
    /// The trace line said when the exchange starts.
    var opening: String { get }
    /// The trace line said when the tunnel opened.
    var openedNote: String { get }
    /// The first step, once the stream to the proxy is open.
    mutating func start() -> TunnelStep
    /// Takes the next bytes of the proxy's answer.
    mutating func receive(_ bytes: UnsafeRawBufferPointer) -> TunnelStep
    /// Takes the origin's addresses a `.resolve` step asked for.
    mutating func resolved(_ addresses: Result<[SocketAddress], CourierError>) -> TunnelStep
    /// The error for a proxy that closed before the exchange ended.
    var closedEarly: CourierError { get }
    /// The error for a stream to the proxy that broke during the exchange.
    func broken(_ error: CourierError) -> CourierError
}

/// What a proxy handshake wants next.
package enum TunnelStep: Equatable {
    /// Send these bytes to the proxy, then wait for its answer.
    case send([UInt8])
    /// Wait for more of the proxy's answer.
    case needMore
    /// Look up the origin's name here (SOCKS5 without remote resolution) and hand the answer to
    /// `resolved`.
    case resolve(String)
    /// The tunnel is open.
    case established
    /// The tunnel cannot be used.
    case failed(CourierError)
}
