import CBrotli
import CLLHTTP
import COpenSSL
import CUV
import CZlib
import CZstd
import Glibc

/// The libraries this build runs on, as curl's `-V` names them ("OpenSSL/3.0.19"), read at run
/// time where the library says (the shared objects may be newer than the headers).
package enum LibraryVersions {
    package static var all: [String] {
        let brotli = BrotliDecoderVersion()
        let brotliText = "\(brotli >> 24).\((brotli >> 12) & 0xfff).\(brotli & 0xfff)"
        return [
            "OpenSSL/" + openSSLVersion,
            "zlib/" + String(cString: zlibVersion()),
            "brotli/" + brotliText,
            "zstd/" + String(cString: ZSTD_versionString()),
            "libuv/" + String(cString: uv_version_string()),
            "llhttp/\(LLHTTP_VERSION_MAJOR).\(LLHTTP_VERSION_MINOR).\(LLHTTP_VERSION_PATCH)",
        ]
    }

    /// "3.0.19" from "OpenSSL 3.0.19 27 Jan 2026".
    private static var openSSLVersion: String {
        let text = String(cString: OpenSSL_version(Int32(OPENSSL_VERSION)))
        let words = text.split(separator: " ")
        return words.count > 1 ? String(words[1]) : text
    }

    /// "x86_64-pc-linux-gnu", as curl prints its host triple.
    package static var host: String {
        var name = utsname()
        uname(&name)
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return machine + "-pc-linux-gnu"
    }
}
