/// A `multipart/form-data` body (RFC 7578): MKNetworkKit's `addFile`/`addData` and plain fields,
/// streamed from disk instead of read into memory.
///
/// The boundary is 128 random bits, so no content can be expected to contain it by chance; the
/// parts held in memory are checked, and a boundary that occurs in one is drawn again (files are
/// not read twice to check: the odds are 2^-128 per position). The length is the sum of the part
/// heads and the sizes of the files, taken without reading them.
public struct MultipartForm: Sendable, Hashable {
    /// One part of the form.
    public enum Part: Sendable, Hashable {
        /// A plain field: `name=value`.
        case field(name: String, value: String)
        /// Bytes in memory, sent as a file upload when `fileName` is set.
        case data(name: String, bytes: [UInt8], mimeType: String, fileName: String?)
        /// A file streamed from disk.
        case file(name: String, path: String, mimeType: String, fileName: String)
    }

    /// The parts, in the order they are sent.
    public private(set) var parts: [Part] = []
    /// The boundary between parts (also in `contentType`).
    public private(set) var boundary: String
    private let chosenBoundary: Bool
    /// A part held in memory contains the caller's chosen boundary: the form cannot be sent.
    private var collidingPart: String?

    /// An empty form; `boundary` only for tests and servers with strict expectations (a chosen
    /// boundary that occurs in a part held in memory fails the request: `.invalidArgument`).
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? Self.randomBoundary()
        chosenBoundary = boundary != nil
    }

    /// The Content-Type the form is sent with.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a plain field.
    public mutating func addField(_ name: String, value: String) {
        parts.append(.field(name: name, value: value))
        redrawIfContained(in: Array(value.utf8), part: name)
    }

    /// Adds bytes from memory; with a `fileName` the server sees a file upload.
    public mutating func addData(_ bytes: [UInt8], forKey name: String, mimeType: String = "application/octet-stream",
                                 fileName: String? = nil) {
        parts.append(.data(name: name, bytes: bytes, mimeType: mimeType, fileName: fileName))
        redrawIfContained(in: bytes, part: name)
    }

    /// Adds a file, streamed when the request is sent. The MIME type defaults to one guessed from
    /// the extension, the file name to the path's last component.
    public mutating func addFile(_ path: String, forKey name: String, mimeType: String? = nil, fileName: String? = nil) {
        let base = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        parts.append(.file(name: name, path: path, mimeType: mimeType ?? Self.mimeType(forExtensionOf: base),
                           fileName: fileName ?? base))
    }

    /// What is sent, in order: heads and in-memory content as bytes, files by path and size.
    package enum Segment: Equatable {
        case bytes([UInt8])
        case file(path: String, size: UInt64)
    }

    /// The form as segments, with every file's current size; fails for a file that cannot be sent.
    package func segments() -> Result<[Segment], CourierError> {
        if let collidingPart {
            return .failure(CourierError(.invalidArgument, "the form's boundary occurs in part \"\(collidingPart)\""))
        }
        var out: [Segment] = []
        var pending: [UInt8] = []
        for part in parts {
            pending += Array("--\(boundary)\r\n".utf8)
            switch part {
            case .field(let name, let value):
                pending += Array("Content-Disposition: form-data; name=\"\(Self.escape(name))\"\r\n\r\n".utf8)
                pending += Array(value.utf8)
            case .data(let name, let bytes, let mimeType, let fileName):
                pending += head(name: name, fileName: fileName, mimeType: mimeType)
                pending += bytes
            case .file(let name, let path, let mimeType, let fileName):
                switch FileBodySource.size(of: path) {
                case .failure(let error): return .failure(error)
                case .success(let size):
                    pending += head(name: name, fileName: fileName, mimeType: mimeType)
                    out.append(.bytes(pending))
                    pending = []
                    if size > 0 { out.append(.file(path: path, size: size)) }
                }
            }
            pending += Array("\r\n".utf8)
        }
        pending += Array("--\(boundary)--\r\n".utf8)
        out.append(.bytes(pending))
        return .success(out)
    }

    /// The body's length, from the segments (files by their sizes, unread).
    package func length() -> Result<UInt64, CourierError> {
        segments().map { list in
            list.reduce(0) { sum, segment in
                switch segment {
                case .bytes(let bytes): return sum + UInt64(bytes.count)
                case .file(_, let size): return sum + size
                }
            }
        }
    }

    private func head(name: String, fileName: String?, mimeType: String) -> [UInt8] {
        var text = "Content-Disposition: form-data; name=\"\(Self.escape(name))\""
        if let fileName { text += "; filename=\"\(Self.escape(fileName))\"" }
        text += "\r\nContent-Type: \(Self.headerSafe(mimeType))\r\n\r\n"
        return Array(text.utf8)
    }

    /// Quoted-string content as browsers write it (the HTML form-submission rules RFC 7578
    /// section 4.2 points to): `"` and line breaks percent-encoded, so a name cannot end its
    /// quotes or its header line.
    package static func escape(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A MIME type with CR, LF and NUL removed (it is written into a part's head).
    private static func headerSafe(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" && $0 != "\0" })
    }

    /// A generated boundary found in a part is drawn again (and every part checked again); a chosen
    /// one cannot be, and the form is marked unsendable.
    private mutating func redrawIfContained(in content: [UInt8], part: String) {
        guard Self.contains(content, Array(boundary.utf8)) else { return }
        guard !chosenBoundary else {
            if collidingPart == nil { collidingPart = part }
            return
        }
        repeat { boundary = Self.randomBoundary() } while parts.contains { partContains($0, boundary) }
    }

    private func partContains(_ part: Part, _ boundary: String) -> Bool {
        switch part {
        case .field(_, let value): return Self.contains(Array(value.utf8), Array(boundary.utf8))
        case .data(_, let bytes, _, _): return Self.contains(bytes, Array(boundary.utf8))
        case .file: return false
        }
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return false }
        var i = 0
        let lastStart = haystack.count - needle.count
        while i <= lastStart {
            if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }

    /// "courier-" and 32 hex digits from the kernel's random source.
    package static func randomBoundary() -> String {
        // The system generator reads the kernel's random source (getrandom).
        var generator = SystemRandomNumberGenerator()
        let random = (generator.next() as UInt64, generator.next() as UInt64)
        func hex(_ v: UInt64) -> String {
            let digits = String(v, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return "courier-" + hex(random.0) + hex(random.1)
    }

    /// A MIME type for a file name's extension; `application/octet-stream` when unknown.
    package static func mimeType(forExtensionOf name: String) -> String {
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        switch name[name.index(after: dot)...].lowercased() {
        case "txt", "text", "log": return "text/plain"
        case "html", "htm": return "text/html"
        case "css": return "text/css"
        case "csv": return "text/csv"
        case "js", "mjs": return "text/javascript"
        case "json": return "application/json"
        case "xml": return "application/xml"
        case "pdf": return "application/pdf"
        case "zip": return "application/zip"
        case "gz", "tgz": return "application/gzip"
        case "tar": return "application/x-tar"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "svg": return "image/svg+xml"
        case "mp4": return "video/mp4"
        case "mp3": return "audio/mpeg"
        case "wav": return "audio/wav"
        default: return "application/octet-stream"
        }
    }
}

/// Reads a form's segments in order: its heads from memory, its files through `FileBodySource`.
final class MultipartBodySource: BodySource {
    private var segments: [MultipartForm.Segment] = []
    private var index = 0
    private var file: FileBodySource?
    private var failure: CourierError?
    var wake: (() -> Void)?

    /// A source for `form`, whose length was admitted as `length` (a file that changed size since
    /// fails the request).
    init(form: MultipartForm, length: UInt64) {
        switch form.segments() {
        case .failure(let error):
            failure = error
        case .success(let list):
            segments = list
            if case .success(let now) = form.length(), now != length {
                failure = CourierError(.fileRead, "a file of the form changed size since the request was admitted")
            }
        }
    }

    func read() -> BodyRead {
        if let failure { return .failed(failure) }
        while index < segments.count {
            if let file {
                let piece = file.read()
                if case .end = piece {
                    file.close()
                    self.file = nil
                    index += 1
                    continue
                }
                return piece
            }
            switch segments[index] {
            case .bytes(let bytes):
                index += 1
                return .array(bytes)
            case .file(let path, let size):
                switch FileBodySource.open(path: path, length: size) {
                case .failure(let error): return .failed(error)
                case .success(let opened): file = opened
                }
            }
        }
        return .end
    }

    var nextFile: FileBodySource? { failure == nil ? file?.nextFile : nil }

    func close() {
        file?.close()
        file = nil
        segments = []
        index = 0
    }
}
