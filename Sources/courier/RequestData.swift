import Courier
import CourierCore
import Glibc

/// Builds the request body from `-d`, `--data-binary`, `--data-raw` and `--json`, as curl does:
/// pieces are joined with `&` (`-d`) or concatenated (`--json`), `@file` reads a file (`@-` stdin),
/// and `-d @file` drops carriage returns and newlines.
enum RequestData {
    /// The request body the flags describe and the Content-Type it implies (nil: Courier's own
    /// or none): `-F` a multipart form, `-T` a file or stdin, `-d`/`--json` bytes.
    /// `stdinCopy` keeps what `-T -` reads for `--trace-ascii`.
    static func requestBody(_ options: CommandLineOptions, stdinCopy: UploadCopy? = nil) throws -> (body: RequestBody, contentType: String?)? {
        if !options.forms.isEmpty {
            var form = MultipartForm()
            for part in options.forms { try addFormPart(part.text, literal: part.literal, to: &form) }
            return (.multipart(form), nil)
        }
        if let upload = options.uploadFile {
            if upload == "-" { return (.stream(BodyStream(StandardInputChunks(copy: stdinCopy))), nil) }
            return (.file(path: upload), nil)
        }
        guard let bytes = try body(options) else { return nil }
        return (.bytes(bytes), options.json.isEmpty ? "application/x-www-form-urlencoded" : nil)
    }

    /// One `-F` argument, curl's syntax: `name=value`, `name=@file` (a file upload), `name=<file`
    /// (the file's content as the value); `;type=` and `;filename=` after a file name.
    static func addFormPart(_ text: String, literal: Bool, to form: inout MultipartForm) throws {
        guard let equals = text.firstIndex(of: "=") else {
            throw UsageError(message: "Illegally formatted input field: \(text)")
        }
        let name = String(text[..<equals])
        let content = String(text[text.index(after: equals)...])
        if literal {
            form.addField(name, value: content)
            return
        }
        if content.hasPrefix("@") || content.hasPrefix("<") {
            var pieces = content.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            let path = pieces.removeFirst()
            var type: String?
            var fileName: String?
            for piece in pieces {
                if piece.hasPrefix("type=") { type = String(piece.dropFirst(5)) }
                else if piece.hasPrefix("filename=") { fileName = String(piece.dropFirst(9)) }
                else { throw UsageError(message: "unknown form option ';\(piece)' in \(text)") }
            }
            if content.hasPrefix("@") {
                if path == "-" {
                    form.addData(try readFile("-"), forKey: name, mimeType: type ?? "application/octet-stream", fileName: fileName ?? "-")
                } else {
                    form.addFile(path, forKey: name, mimeType: type, fileName: fileName)
                }
            } else if let type {
                form.addData(try readFile(path), forKey: name, mimeType: type, fileName: fileName)
            } else {
                form.addField(name, value: String(decoding: try readFile(path), as: UTF8.self))
            }
            return
        }
        form.addField(name, value: content)
    }

    static func body(_ options: CommandLineOptions) throws -> [UInt8]? {
        if !options.json.isEmpty {
            var out: [UInt8] = []
            for piece in options.json { out += try load(piece) }
            return out
        }
        guard !options.data.isEmpty else { return nil }
        var out: [UInt8] = []
        for (i, piece) in options.data.enumerated() {
            if i > 0 { out.append(UInt8(ascii: "&")) }
            out += try load(piece)
        }
        return out
    }

    private static func load(_ piece: DataArgument) throws -> [UInt8] {
        if piece.kind == .urlencode { return try urlencoded(piece.text) }
        guard piece.kind != .raw, piece.text.hasPrefix("@") else { return Array(piece.text.utf8) }
        let path = String(piece.text.dropFirst())
        var bytes = try readFile(path)
        if piece.kind == .urlencodedAscii { bytes.removeAll { $0 == 13 || $0 == 10 } }
        return bytes
    }

    /// `--data-urlencode`, curl's forms: `content`, `=content`, `name=content`, `@file`,
    /// `name@file` (the name is sent as given, the content percent-encoded).
    static func urlencoded(_ text: String) throws -> [UInt8] {
        let separator = text.firstIndex { $0 == "=" || $0 == "@" }
        guard let separator else { return percentEncoded(Array(text.utf8)) }
        let name = Array(text[..<separator].utf8)
        let rest = String(text[text.index(after: separator)...])
        let content = text[separator] == "@" ? try readFile(rest) : Array(rest.utf8)
        return name.isEmpty ? percentEncoded(content) : name + [UInt8(ascii: "=")] + percentEncoded(content)
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters (curl_easy_escape).
    static func percentEncoded(_ bytes: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return out
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            out += chunk[..<n]
        }
        return out
    }
}

/// Standard input as body chunks (`-T -`): read on a task, one chunk ahead of the socket.
struct StandardInputChunks: AsyncSequence, Sendable {
    typealias Element = [UInt8]

    /// The most one read takes (a pipe gives what it holds, a file this much).
    static let chunkSize = 128 * 1024
    /// Where each chunk is also kept (`--trace-ascii`), if anywhere.
    var copy: UploadCopy?

    struct AsyncIterator: AsyncIteratorProtocol {
        let copy: UploadCopy?

        mutating func next() async throws -> [UInt8]? {
            var failure: Int32 = 0
            // Read straight into the array's storage: no zero-filling of memory the read
            // overwrites at once (a memset of every byte uploaded).
            let chunk = [UInt8](unsafeUninitializedCapacity: StandardInputChunks.chunkSize) { buffer, count in
                count = 0
                while true {
                    let n = read(0, buffer.baseAddress, buffer.count)
                    if n < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    count = n
                    return
                }
            }
            if failure != 0 { throw CourierError(.bodySource, "stdin: \(String(cString: strerror(failure)))") }
            if chunk.isEmpty {
                copy?.end()
                return nil
            }
            copy?.append(chunk)
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(copy: copy) }
}
