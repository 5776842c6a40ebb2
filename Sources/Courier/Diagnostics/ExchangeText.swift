import CourierCore

/// One exchange as people read it, built when its response head arrives (the request went out
/// just before): which connection carried it, the request head as sent, the response head. The
/// CLI's `-v` and `--trace-ascii` and the C ABI's debug callback (curl's CURLOPT_DEBUGFUNCTION)
/// show the same text. Only built when asked for: nothing of it is on the request path.
package enum ExchangeText {
    /// The exchange as its two parts: the connection lines and the request head as sent, or, for
    /// a response served from storage (no connection: nothing was sent), one line saying so and
    /// no request head. `number` turns a connection's id into how the caller counts connections.
    package static func describe(_ transfer: Transfer, number: (UInt64) -> String) -> (info: [String], requestHead: [UInt8]?) {
        guard let connection = transfer.connectionInfo else {
            return (["No request sent: the response comes from the cache"], nil)
        }
        if transfer.metrics.streamID != 0 { return http2(transfer, connection: self.connection(of: transfer, number: number(connection.id))) }
        return (self.connection(of: transfer, number: number(connection.id)), requestHead(of: transfer))
    }

    /// An exchange that went over HTTP/2, as curl 8's `-v` shows one: the stream and its header
    /// block as sent (pseudo-header fields first), then the request head in HTTP/1 form.
    private static func http2(_ transfer: Transfer, connection: [String]) -> (info: [String], requestHead: [UInt8]?) {
        let url = transfer.url
        let id = transfer.metrics.streamID
        let block = HTTP2RequestHeaders(method: transfer.method, scheme: url.scheme == .https ? "https" : "http",
                                        authority: url.hostHeader, path: url.path, query: url.query, headers: transfer.headers,
                                        contentLength: transfer.isRequestBodyChunked ? nil
                                            : RequestEncoder.contentLength(for: transfer.method, bodyLength: transfer.requestBodyLength),
                                        acceptEncoding: transfer.options.decompress && !transfer.headers.contains("Accept-Encoding"))
        var info = connection
        if !transfer.metrics.reusedConnection { info.append("using HTTP/2") }
        info.append("[HTTP/2] [\(id)] OPENED stream for \(url)")
        for (name, value) in block.pairs { info.append("[HTTP/2] [\(id)] [\(name): \(value)]") }
        var head = "\(transfer.method.rawValue) \(url.path)\(url.query.map { "?" + $0 } ?? "") HTTP/2\r\n"
        for (name, value) in block.pairs where !name.hasPrefix(":") || name == ":authority" {
            head += name == ":authority" ? "Host: \(value)\r\n" : "\(name): \(value)\r\n"
        }
        return (info, Array((head + "\r\n").utf8))
    }

    /// The connection lines curl's `-v` prints (without `* `): `  Trying addr...` and
    /// `Connected to host (ip) port N (#n)`, the TLS session and certificate, or `Re-using
    /// existing connection #n with host h`.
    private static func connection(of transfer: Transfer, number: String) -> [String] {
        let m = transfer.metrics
        let url = transfer.url
        if m.reusedConnection { return ["Re-using existing connection #\(number) with host \(url.host)"] }
        if let trace = transfer.connectionTrace { return lines(of: trace, number: number) }
        var lines = ["  Trying \(m.remoteAddress)...",
                     "Connected to \(url.host) (\(m.remoteEndpoint.ip)) port \(url.port) (#\(number))"]
        if let tls = transfer.connectionInfo?.tls {
            lines.append("SSL connection using \(tls.version) / \(tls.cipher)")
            if !tls.alpn.isEmpty { lines.append("ALPN: server accepted \(tls.alpn)") }
            lines.append("Server certificate:")
            lines.append(" subject: \(tls.subject)")
            lines.append(" start date: \(tls.notBefore)")
            lines.append(" expire date: \(tls.notAfter)")
            lines.append(" issuer: \(tls.issuer)")
            lines.append(tls.verifyResult == 0 ? " SSL certificate verify ok." : " SSL certificate verify result: \(tls.verifyResult), continuing anyway.")
        }
        return lines
    }

    /// What opening a connection that failed did (its trace, when the request asked for one):
    /// the addresses tried, the handshake as far as it went, and why it stopped.
    package static func failedConnection(of transfer: Transfer, number: (UInt64) -> String) -> [String] {
        guard let trace = transfer.connectionTrace, transfer.head == nil else { return [] }
        return lines(of: trace, number: number(trace.connectionID))
    }

    /// A trace's lines, the one saying where it connected numbered as the caller counts.
    private static func lines(of trace: ConnectionTrace, number: String) -> [String] {
        var lines = trace.lines
        if let index = trace.connectedLine { lines[index] += " (#\(number))" }
        return lines
    }

    /// The request head of the exchange, bytes as the encoder writes them (CRLF lines, ending
    /// with the empty line).
    private static func requestHead(of transfer: Transfer) -> [UInt8] {
        let url = transfer.url
        var head: [UInt8] = []
        var framing = RequestEncoder.Framing(host: !transfer.headers.contains("Host"),
                                             contentLength: RequestEncoder.contentLength(for: transfer.method, bodyLength: transfer.requestBodyLength),
                                             acceptEncoding: transfer.options.decompress && !transfer.headers.contains("Accept-Encoding"))
        // The body's framing as the connection wrote it: chunked when its length is unknown,
        // and the Expect field when it waited for a 100.
        let hasBody = transfer.isRequestBodyChunked || transfer.requestBodyLength > 0
        if hasBody, transfer.isRequestBodyChunked {
            framing.contentLength = nil
            framing.chunked = true
        }
        framing.expectContinue = hasBody && transfer.requestExpectsContinue
        RequestEncoder.encodeHead(method: transfer.method, path: url.path, query: url.query, hostHeader: url.hostHeader,
                                  headers: transfer.headers, framing: framing, into: &head)
        if transfer.options.sendsHTTP10 { head.withUnsafeMutableBytes { RequestEncoder.downgradeToHTTP10($0) } }
        return head
    }

    /// The response head as text: status line, fields, the empty line, CRLF-separated.
    package static func responseHead(_ head: ResponseHead) -> String {
        head.statusLine + "\r\n" + head.headers.map { "\($0.name): \($0.value)\r\n" }.joined() + "\r\n"
    }
}
