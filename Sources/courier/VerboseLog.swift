import Courier
import CourierCore
import Glibc

/// `-v` in curl's shape, built when a response head arrives (the request went out just before):
/// the connection (`*   Trying`, `* Connected to`, or `* Re-using existing connection`), TLS
/// (`* SSL connection using`, `* Server certificate:` ...), the request head (`> `), the
/// response head (`< `); and when the transfer ends, what became of the connection.
/// `--trace-ascii` writes the same events in curl's trace format.
enum VerboseLog {
    /// One exchange as the lines curl prints, without the `* `/`> `/`< ` prefixes decided yet.
    struct Exchange {
        var info: [String] = []
        var sent: [String] = []
        var received: [String] = []
    }

    static func exchange(_ transfer: Transfer, _ head: ResponseHead) -> Exchange {
        var exchange = Exchange()
        let (info, request) = ExchangeText.describe(transfer) { String(curlNumber($0)) }
        exchange.info = info
        if let request {
            exchange.sent = String(decoding: request, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
        exchange.received = [head.statusLine] + head.headers.map { "\($0.name): \($0.value)" } + [""]
        return exchange
    }

    /// `-v`'s text for stderr.
    static func verbose(_ exchange: Exchange) -> String {
        exchange.info.map { "* \($0)\n" }.joined() + exchange.sent.map { "> \($0)\n" }.joined()
            + exchange.received.map { "< \($0)\n" }.joined()
    }

    /// What became of the connection when the transfer ended.
    static func end(_ transfer: Transfer?, connection: UInt64?, closing: Bool) -> String {
        guard let transfer, let connection else { return "" }
        let number = curlNumber(connection)
        return closing ? "Closing connection \(number)" : "Connection #\(number) to host \(transfer.url.host) left intact"
    }

    /// curl numbers a process's connections from 0; the loop's ids start at 1.
    static func curlNumber(_ id: UInt64) -> UInt64 { id > 0 ? id - 1 : 0 }

    /// `--trace-ascii`: curl's trace of one exchange (`== Info:`, `=> Send header, N bytes`, offset-numbered lines).
    /// `sentData` writes the request body's `=> Send data` blocks (`traceSent`) between the two
    /// heads, a block at a time (a large upload is never one string).
    static func trace(_ exchange: Exchange, to write: @escaping (String) -> Void, sentData: ((String) -> Void) -> Void = { _ in }) {
        var out = exchange.info.map { "== Info: \($0)\n" }.joined()
        if !exchange.sent.isEmpty { out += block("=> Send header", exchange.sent.map { $0 + "\r\n" }) }
        write(out)
        sentData(write)
        write(block("<= Recv header", exchange.received.map { $0 + "\r\n" }))
    }

    /// `<= Recv data, N bytes (0xN)` alone: a body whose pieces were not dumped (kept in memory for
    /// -Z, or resumed into its file with -C -).
    static func traceData(_ count: UInt64) -> String {
        count == 0 ? "" : "<= Recv data, \(count) bytes (0x\(String(count, radix: 16)))\n"
    }

    /// One piece of the body as curl's --trace-ascii shows it: its title, then 64 bytes to a line
    /// after the line's offset in hex, bytes outside printable ASCII as ".", and a CR LF ending a
    /// line early (not shown).
    static func traceData(_ bytes: UnsafeRawBufferPointer, title: String = "<= Recv data") -> String {
        var out = "\(title), \(bytes.count) bytes (0x\(String(bytes.count, radix: 16)))\n"
        out.reserveCapacity(out.utf8.count + bytes.count + bytes.count / 64 * 7 + 8)
        var i = 0
        while i < bytes.count {
            let hex = String(i, radix: 16)
            out += String(repeating: "0", count: max(0, 4 - hex.count)) + hex + ": "
            var column = 0
            while column < 64, i < bytes.count {
                if bytes[i] == 0x0D, i + 1 < bytes.count, bytes[i + 1] == 0x0A {
                    i += 2
                    break
                }
                let byte = bytes[i]
                out.unicodeScalars.append(Unicode.Scalar(byte >= 0x20 && byte < 0x7F ? byte : UInt8(ascii: ".")))
                i += 1
                column += 1
                // A CR LF right after the line's last byte ends it too (no empty line after it).
                if column == 64, i + 1 < bytes.count, bytes[i] == 0x0D, bytes[i + 1] == 0x0A { i += 2 }
            }
            out += "\n"
        }
        return out
    }

    /// `=> Send data` for the `count` bytes of the request body that went out before the response
    /// head: read again from memory, from the file, or by making the form once more (a form's
    /// boundary and parts are fixed when it is made, so the bytes are the ones sent). A stream (-T
    /// - from stdin) cannot be read twice: `stdinCopy` kept it, else its size line only.
    /// (`length`: the whole body's, as admitted: a form checks it against its files.)
    static func traceSent(_ body: RequestBody, count: UInt64, length: UInt64, stdinCopy: UploadCopy? = nil, to write: (String) -> Void) {
        guard count > 0 else { return }
        switch body {
        case .empty:
            return
        case .bytes(let bytes):
            bytes.withUnsafeBytes { write(traceData(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(count))), title: "=> Send data")) }
        case .stream:
            if let stdinCopy { return stdinCopy.traceSent(count: count, to: write) }
            write("=> Send data, \(count) bytes (0x\(String(count, radix: 16)))\n")
        case .file, .multipart:
            guard case .success(let source)? = body.makeSource(length: length) else { return }
            defer { source.close() }
            var left = count
            func show(_ piece: UnsafeRawBufferPointer) {
                let shown = UnsafeRawBufferPointer(rebasing: piece.prefix(Int(min(left, UInt64(piece.count)))))
                write(traceData(shown, title: "=> Send data"))
                left -= UInt64(shown.count)
            }
            while left > 0 {
                switch source.read() {
                case .bytes(let piece): show(piece)
                case .array(let piece): piece.withUnsafeBytes { show($0) }
                case .end, .pending, .failed: return
                }
            }
        }
    }

    /// Writes `<= Recv data` blocks for the last `count` bytes of the file at `path` (a body
    /// resumed into its file: what this run received is the file's tail), 64 KiB to a block;
    /// false (nothing written) when the file cannot be opened or is shorter.
    static func traceFileTail(_ path: String, count: UInt64, to write: (String) -> Void) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, UInt64(info.st_size) >= count else { return false }
        var offset = off_t(UInt64(info.st_size) - count)
        var block = [UInt8](repeating: 0, count: 64 << 10)
        while offset < info.st_size {
            let n = block.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            block.withUnsafeBytes { write(traceData(UnsafeRawBufferPointer(rebasing: $0.prefix(n)))) }
            offset += off_t(n)
        }
        return true
    }

    /// curl's trace block: a title with the size, then each line with its offset in hex.
    private static func block(_ title: String, _ lines: [String]) -> String {
        let size = lines.reduce(0) { $0 + $1.utf8.count }
        var out = "\(title), \(size) bytes (0x\(String(size, radix: 16)))\n"
        var offset = 0
        for line in lines {
            let hex = String(offset, radix: 16)
            out += String(repeating: "0", count: max(0, 4 - hex.count)) + hex + ": " + line.dropLast() + "\n"
            offset += line.utf8.count
        }
        return out
    }
}
