/// Writes an HTTP/1.1 request head (RFC 9112 sections 3 and 5) into a reusable byte buffer.
///
/// The head is built in one buffer the loop reuses for every request, and the body is not copied
/// into it: the connection hands head and body to the kernel together with one vectored write.
/// Everything written here was validated before (`CourierURL` escapes the target, headers were
/// checked for CR/LF/NUL at submission), so the encoder itself cannot produce a smuggled line.
package enum RequestEncoder {
    /// What the encoder adds besides the caller's own headers.
    package struct Framing: Equatable {
        /// Write `Host` (false when the caller set one).
        package var host = true
        /// Body length for `Content-Length`; nil for none.
        package var contentLength: UInt64?
        /// Add `Accept-Encoding: gzip, deflate, br, zstd` (when decoding and the caller set none).
        package var acceptEncoding = false
        /// `Transfer-Encoding: chunked` (a body of unknown length) instead of Content-Length.
        package var chunked = false
        /// `Expect: 100-continue`.
        package var expectContinue = false

        package init(host: Bool = true, contentLength: UInt64? = nil, acceptEncoding: Bool = false,
                     chunked: Bool = false, expectContinue: Bool = false) {
            self.host = host
            self.contentLength = contentLength
            self.acceptEncoding = acceptEncoding
            self.chunked = chunked
            self.expectContinue = expectContinue
        }
    }

    /// `Content-Length` for a body of `length` bytes sent with `method`: always when there is a body,
    /// and `0` for methods whose requests normally carry one (RFC 9110 section 8.6: servers may
    /// otherwise wait for a body, or answer 411).
    package static func contentLength(for method: HTTPMethod, bodyLength: UInt64) -> UInt64? {
        if bodyLength > 0 { return bodyLength }
        return method.announcesEmptyBody ? 0 : nil
    }

    /// Turns an encoded head's request line into an HTTP/1.0 one (curl's --http1.0), in place:
    /// the version's last digit is the byte before the first CR LF. Kept out of `encodeHead`,
    /// which every request runs.
    @inline(never)
    package static func downgradeToHTTP10(_ head: UnsafeMutableRawBufferPointer) {
        guard let end = (0..<max(head.count - 1, 0)).first(where: { head[$0] == 0x0D && head[$0 + 1] == 0x0A }),
              end >= 8, head[end - 1] == UInt8(ascii: "1") else { return }
        head[end - 1] = UInt8(ascii: "0")
    }

    /// Replaces `buffer`'s contents with the request head, keeping its capacity.
    package static func encodeHead(method: HTTPMethod, path: String, query: String?, hostHeader: String,
                                   headers: HTTPHeaders, framing: Framing, into buffer: inout RawBuffer) {
        buffer.clear()
        buffer.append(method.rawValue)
        buffer.append(0x20)
        buffer.append(path)
        if let query {
            buffer.append(UInt8(ascii: "?"))
            buffer.append(query)
        }
        buffer.append(" HTTP/1.1\r\n")
        if framing.host {
            buffer.append("Host: ")
            buffer.append(hostHeader)
            buffer.append("\r\n")
        }
        if headers.isWireFormat {
            // One memcpy for all the caller's fields.
            buffer.append(headers.storage)
        } else {
            headers.storage.withUnsafeBytes { raw in
                for f in headers.fields {
                    buffer.append(UnsafeRawBufferPointer(rebasing: raw[Int(f.nameStart)..<Int(f.nameEnd)]))
                    buffer.append(": ")
                    buffer.append(UnsafeRawBufferPointer(rebasing: raw[Int(f.valueStart)..<Int(f.valueEnd)]))
                    buffer.append("\r\n")
                }
            }
        }
        if framing.acceptEncoding {
            buffer.append("Accept-Encoding: gzip, deflate, br, zstd\r\n")
        }
        if framing.chunked {
            buffer.append("Transfer-Encoding: chunked\r\n")
        } else if let length = framing.contentLength {
            buffer.append("Content-Length: ")
            appendDecimal(length, to: &buffer)
            buffer.append("\r\n")
        }
        if framing.expectContinue {
            buffer.append("Expect: 100-continue\r\n")
        }
        buffer.append("\r\n")
    }

    /// Rewrites an encoded head for a proxy that forwards it (RFC 9112 §3.2.2): the target in
    /// absolute form (`GET http://host:port/path HTTP/1.1`) and the proxy's credentials unless the
    /// request carries its own. Kept apart from `encodeHead`, which every direct request runs.
    @inline(never)
    package static func forwardForm(_ forward: ForwardProxy, method: HTTPMethod, headers: HTTPHeaders, head buffer: inout RawBuffer) {
        let original = Array(UnsafeRawBufferPointer(start: buffer.base, count: buffer.count))
        let targetStart = method.rawValue.utf8.count + 1
        buffer.clear()
        original.withUnsafeBytes { raw in
            buffer.append(UnsafeRawBufferPointer(rebasing: raw[..<targetStart]))
            buffer.append(forward.targetPrefix)
            // Everything up to the blank line that ends the head.
            buffer.append(UnsafeRawBufferPointer(rebasing: raw[targetStart..<(raw.count - 2)]))
        }
        if let authorization = forward.authorization, !headers.contains("Proxy-Authorization") {
            buffer.append("Proxy-Authorization: ")
            buffer.append(authorization)
            buffer.append("\r\n")
        }
        buffer.append("\r\n")
    }

    /// The line that opens a chunk of `size` bytes (RFC 9112 section 7.1), preceded by the CRLF
    /// that closes the previous chunk unless this is the first: "\r\n1f40\r\n". A size of 0
    /// writes the last chunk and the empty trailer section.
    package static func encodeChunkLine(size: Int, first: Bool, into buffer: inout RawBuffer) {
        buffer.clear()
        if !first { buffer.append("\r\n") }
        if size == 0 {
            buffer.append("0\r\n\r\n")
            return
        }
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var shift = (Int.bitWidth - size.leadingZeroBitCount + 3) / 4 * 4 - 4
        while shift >= 0 {
            buffer.append(digits[(size >> shift) & 0xf])
            shift -= 4
        }
        buffer.append("\r\n")
    }

    /// The same head as bytes in an array (tests, `courier -v`).
    package static func encodeHead(method: HTTPMethod, path: String, query: String?, hostHeader: String,
                                   headers: HTTPHeaders, framing: Framing, forward: ForwardProxy? = nil, into array: inout [UInt8]) {
        var buffer = RawBuffer(capacity: 512)
        encodeHead(method: method, path: path, query: query, hostHeader: hostHeader, headers: headers, framing: framing, into: &buffer)
        if let forward { forwardForm(forward, method: method, headers: headers, head: &buffer) }
        array = Array(buffer.bytes)
        buffer.free()
    }

    /// Writes a decimal number without going through `String`.
    package static func appendDecimal(_ value: UInt64, to array: inout [UInt8]) {
        var buffer = RawBuffer(capacity: 32)
        appendDecimal(value, to: &buffer)
        array.append(contentsOf: buffer.bytes)
        buffer.free()
    }

    /// Writes a decimal number without going through `String`.
    package static func appendDecimal(_ value: UInt64, to buffer: inout RawBuffer) {
        if value == 0 { buffer.append(UInt8(ascii: "0")); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var v = value
        withUnsafeMutableBytes(of: &digits) { raw in
            while v > 0 {
                raw[count] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { buffer.append(raw[i]) }
        }
    }
}
