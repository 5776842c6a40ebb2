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
        /// Add `Accept-Encoding: gzip, deflate` (when decoding and the caller set none).
        package var acceptEncoding = false

        package init(host: Bool = true, contentLength: UInt64? = nil, acceptEncoding: Bool = false) {
            self.host = host
            self.contentLength = contentLength
            self.acceptEncoding = acceptEncoding
        }
    }

    /// `Content-Length` for a body of `length` bytes sent with `method`: always when there is a body,
    /// and `0` for methods whose requests normally carry one (RFC 9110 section 8.6: servers may
    /// otherwise wait for a body, or answer 411).
    package static func contentLength(for method: HTTPMethod, bodyLength: UInt64) -> UInt64? {
        if bodyLength > 0 { return bodyLength }
        switch method.rawValue {
        case "POST", "PUT", "PATCH": return 0
        default: return nil
        }
    }

    /// Replaces `buffer`'s contents with the request head, keeping its capacity.
    package static func encodeHead(method: HTTPMethod, target: String, hostHeader: String,
                                   headers: HTTPHeaders, framing: Framing, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: method.rawValue.utf8)
        buffer.append(0x20)
        buffer.append(contentsOf: target.utf8)
        append(" HTTP/1.1\r\n", to: &buffer)
        if framing.host {
            append("Host: ", to: &buffer)
            buffer.append(contentsOf: hostHeader.utf8)
            append("\r\n", to: &buffer)
        }
        buffer.append(contentsOf: headers.storage)
        if framing.acceptEncoding {
            append("Accept-Encoding: gzip, deflate\r\n", to: &buffer)
        }
        if let length = framing.contentLength {
            append("Content-Length: ", to: &buffer)
            appendDecimal(length, to: &buffer)
            append("\r\n", to: &buffer)
        }
        append("\r\n", to: &buffer)
    }

    @inline(__always)
    private static func append(_ literal: StaticString, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Writes a decimal number without going through `String`.
    package static func appendDecimal(_ value: UInt64, to buffer: inout [UInt8]) {
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
