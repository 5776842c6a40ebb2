/// The CONNECT exchange that opens a tunnel through an HTTP proxy (RFC 9110 §9.3.6): the request
/// to send, then the proxy's answer read until its head ends.
///
/// A pure value: bytes in, an outcome out. A 2xx opens the tunnel; any other status refuses it
/// (its number kept for the error), and so does anything that is not an HTTP/1 answer. A CONNECT
/// answer has no body, and TLS speaks first inside the tunnel, so bytes after a 2xx head are an
/// error too, not something to hand on.
package struct TunnelHandshake: ProxyHandshake {
    /// The largest answer head accepted (a proxy's error page has no business being larger).
    package static let headLimit = 16 * 1024

    /// The request bytes: `CONNECT host:port HTTP/1.1`, `Host`, and `Proxy-Authorization` when
    /// the proxy has credentials.
    package let request: [UInt8]
    /// The `host:port` the tunnel goes to.
    package let target: String
    private var head: [UInt8] = []
    /// Where the search for the blank line resumes (bytes before it were already searched).
    private var scanned = 0

    /// A handshake to `target` (`host:port`, IPv6 bracketed).
    package init(target: String, authorization: String?) {
        self.target = target
        var text = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let authorization { text += "Proxy-Authorization: \(authorization)\r\n" }
        text += "\r\n"
        request = Array(text.utf8)
    }

    package var opening: String { "Establishing HTTP proxy tunnel to \(target)" }
    package var openedNote: String { "CONNECT tunnel established" }

    /// The CONNECT request.
    package func start() -> TunnelStep { .send(request) }

    /// Takes the next bytes of the proxy's answer: `.needMore` until its head ended, then
    /// `.established` or `.failed`.
    package mutating func receive(_ bytes: UnsafeRawBufferPointer) -> TunnelStep {
        head.append(contentsOf: bytes)
        guard let end = headEnd() else {
            if head.count > Self.headLimit {
                return .failed(CourierError(.proxyHandshake, "the CONNECT answer's head exceeds \(Self.headLimit) bytes"))
            }
            return .needMore
        }
        guard let status = Self.status(of: head[..<end]) else {
            return .failed(CourierError(.proxyHandshake, "the answer to CONNECT is not an HTTP/1 status line"))
        }
        guard (200..<300).contains(status) else {
            return .failed(CourierError(.proxyTunnelRefused, "CONNECT tunnel failed, response \(status)", status: status))
        }
        if head.count > end {
            return .failed(CourierError(.proxyHandshake, "the proxy sent \(head.count - end) bytes after its CONNECT answer"))
        }
        head = []
        return .established
    }

    /// (A CONNECT names the origin as given: the proxy resolves it.)
    package func resolved(_ addresses: Result<[SocketAddress], CourierError>) -> TunnelStep { .needMore }

    /// The proxy closed before its answer ended.
    package var closedEarly: CourierError {
        CourierError(.proxyTunnelClosed, head.isEmpty ? "no answer to CONNECT" : "the CONNECT answer was cut short")
    }

    package func broken(_ error: CourierError) -> CourierError {
        CourierError(.proxyTunnelClosed, "during CONNECT: \(error.detail ?? error.message)")
    }

    /// The index just past the blank line ending the head (CRLF CRLF, or bare LF LF), if seen.
    private mutating func headEnd() -> Int? {
        var index = max(0, scanned - 3)
        while index < head.count {
            if head[index] == 0x0A {
                if index + 1 < head.count, head[index + 1] == 0x0A { return index + 2 }
                if index + 2 < head.count, head[index + 1] == 0x0D, head[index + 2] == 0x0A { return index + 3 }
            }
            index += 1
        }
        scanned = head.count
        return nil
    }

    /// The status of `HTTP/1.x NNN ...`, nil when the first line is not one.
    private static func status(of head: ArraySlice<UInt8>) -> Int? {
        let prefix = Array("HTTP/1.".utf8)
        guard head.count >= 12, head.prefix(prefix.count).elementsEqual(prefix) else { return nil }
        var index = head.startIndex + prefix.count
        guard head[index] == UInt8(ascii: "0") || head[index] == UInt8(ascii: "1") else { return nil }
        index += 1
        guard head[index] == 0x20 else { return nil }
        index += 1
        var status = 0
        for _ in 0..<3 {
            let digit = head[index]
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            status = status * 10 + Int(digit - UInt8(ascii: "0"))
            index += 1
        }
        guard head[index] == 0x20 || head[index] == 0x0D || head[index] == 0x0A, status >= 100 else { return nil }
        return status
    }
}
