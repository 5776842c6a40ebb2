/// What an HTTP/2 connection tells its owner (the pool's executor), on the loop thread. Like
/// `HTTP1ConnectionDelegate`, it is all the connection knows of the layers above.
package protocol HTTP2ConnectionDelegate: RetryApproval {
    /// The server's concurrency limit changed: the connection may carry `limit` streams at once.
    func http2CapacityChanged(_ connection: HTTP2Connection, limit: Int)
    /// The connection takes no new streams (a GOAWAY, or it is failing); it reports this before
    /// the ends of the streams it fails, so none of them is handed the same connection again.
    func http2ConnectionDraining(_ connection: HTTP2Connection)
    /// The connection closed; it reports nothing more.
    func http2ConnectionClosed(_ connection: HTTP2Connection)
    /// The exchange of `transfer` ended on the connection. A `replay` failure was never
    /// processed by the server (REFUSED_STREAM, above a GOAWAY's last stream id, or a request
    /// HTTP/2 cannot carry for this server): any method may go again on another connection.
    func http2StreamFinished(_ connection: HTTP2Connection, _ transfer: Transfer, outcome: ExchangeOutcome)
}
