/// Reads back the HTTP/1.1 requests Courier writes to a mock connection: the head to its blank
/// line, then the body by Content-Length or chunked, requests one after the other (keep-alive).
/// A pure value: bytes in, what is complete out.
struct MockRequestReader {
    enum Event {
        /// The head asks for `Expect: 100-continue`: the body follows an interim answer.
        case expectsContinue
        /// A whole request.
        case request(MockServer.Request)
        /// Bytes that are no HTTP/1.1 request (an HTTP/2 preface, garbage).
        case malformed(String)
    }

    private var buffer: [UInt8] = []
    private var head: Head?
    private var continued = false

    /// Takes `bytes`; what became complete, in order.
    mutating func take(_ bytes: UnsafeRawBufferPointer) -> [Event] {
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        while true {
            if head == nil {
                guard let end = Self.blankLine(in: buffer) else { break }
                switch Self.parseHead(buffer[..<end]) {
                case .failure(let problem):
                    events.append(.malformed(problem.detail ?? problem.message))
                    buffer = []
                    return events
                case .success(let parsed):
                    head = parsed
                    buffer.removeFirst(end)
                    if parsed.headers["Expect"]?.lowercased() == "100-continue", !continued {
                        continued = true
                        events.append(.expectsContinue)
                    }
                }
            }
            guard let current = head, let taken = takeBody(length: current.length) else { break }
            guard case .success(let body) = taken else {
                if case .failure(let problem) = taken { events.append(.malformed(problem.detail ?? problem.message)) }
                buffer = []
                return events
            }
            events.append(.request(MockServer.Request(method: current.method, target: current.target, headers: current.headers, body: body)))
            head = nil
            continued = false
        }
        return events
    }

    /// The body when it is all there (removed from the buffer): `length` bytes, or chunked; nil
    /// while it is not, a failure for a chunk size that does not read (never a wait for bytes
    /// that will not come).
    private mutating func takeBody(length: Int?) -> Result<[UInt8], CourierError>? {
        if let length {
            guard buffer.count >= length else { return nil }
            defer { buffer.removeFirst(length) }
            return .success(Array(buffer[..<length]))
        }
        var body: [UInt8] = []
        var index = 0
        while true {
            guard let lineEnd = Self.lineEnd(in: buffer, from: index) else { return nil }
            let sizeText = String(decoding: buffer[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingSpaces, radix: 16), size >= 0 else {
                return .failure(CourierError(.malformedResponse, "a chunk size that does not read: \(sizeText.prefix(20))"))
            }
            index = lineEnd + 2
            if size == 0 {
                // Trailers, then the blank line.
                while true {
                    guard let end = Self.lineEnd(in: buffer, from: index) else { return nil }
                    let empty = end == index
                    index = end + 2
                    if empty { break }
                }
                buffer.removeFirst(index)
                return .success(body)
            }
            guard buffer.count >= index + size + 2 else { return nil }
            body += buffer[index..<(index + size)]
            index += size + 2
        }
    }

    private typealias Head = (method: String, target: String, headers: HTTPHeaders, length: Int?)

    /// The head's request line and fields; the failure's detail says what was wrong.
    private static func parseHead(_ bytes: ArraySlice<UInt8>) -> Result<Head, CourierError> {
        // (Bytes, not Characters: "\r\n" is one Character.)
        let lines = bytes.split(separator: 10).map { line in Substring(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self) }
            .filter { !$0.isEmpty }
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3, parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            return .failure(CourierError(.malformedResponse, "not an HTTP/1.1 request: \(lines.first?.prefix(40) ?? "")"))
        }
        var headers = HTTPHeaders()
        var length: Int? = 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return .failure(CourierError(.malformedResponse, "a field without a colon")) }
            let name = String(line[..<colon])
            let value = String(line[line.index(after: colon)...].trimmingSpaces)
            headers.add(name: name, value: value)
            if name.lowercased() == "content-length" {
                guard let number = Int(value), number >= 0 else { return .failure(CourierError(.malformedResponse, "Content-Length \(value)")) }
                length = number
            }
            if name.lowercased() == "transfer-encoding", value.lowercased().contains("chunked") { length = nil }
        }
        return .success((String(parts[0]), String(parts[1]), headers, length))
    }

    /// The index just past the first CRLF CRLF, if any.
    private static func blankLine(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// The index of the CR of the first CRLF at or after `start`, if any.
    private static func lineEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }
}
