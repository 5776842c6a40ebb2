import Courier
import CourierCore
import Glibc

/// Builds the request body from `-d`, `--data-binary`, `--data-raw` and `--json`, as curl does:
/// pieces are joined with `&` (`-d`) or concatenated (`--json`), `@file` reads a file (`@-` stdin),
/// and `-d @file` drops carriage returns and newlines.
enum RequestData {
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
        guard piece.kind != .raw, piece.text.hasPrefix("@") else { return Array(piece.text.utf8) }
        let path = String(piece.text.dropFirst())
        var bytes = try readFile(path)
        if piece.kind == .urlencodedAscii { bytes.removeAll { $0 == 13 || $0 == 10 } }
        return bytes
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
