import Courier
import CourierCore

/// What `-w` can print about one transfer.
struct TransferReport {
    var url: String
    var effectiveURL: String
    /// The last status received (a redirect's when redirects ran out), 0 for none.
    var status: Int
    var head: ResponseHead?
    var metrics: TransferMetrics
    var exitCode: Int32
    var errorMessage: String
    var headerBytes: Int
    /// hit, miss, revalidated, stale or bypass.
    var cacheStatus: String
    var method = "GET"
    /// Where the body went ("" for stdout).
    var filename = ""
    /// The URL's position on the command line, after globbing (curl's urlnum).
    var urlIndex = 0
    var referer: String?
    /// curl's timing variables (`CurlTimeline`): each hop's times added up.
    var timeline = CurlTimeline()
    /// This end of the connection (local_ip, local_port), nil when none was made.
    var localAddress: SocketAddress?
    /// The certificates the last TLS connection's server sent, leaf first (certs, num_certs).
    var certificates: [CertificateInfo] = []
    /// The last request's body bytes on the wire, chunked framing included (size_upload).
    var uploadBytes: UInt64 = 0
}

/// curl's `--write-out` format: `%{variable}`, `%%`, `\n`, `\r`, `\t`; `%{stderr}` and
/// `%{stdout}` switch where the rest goes, `%{onerror}` drops the rest unless the transfer
/// failed; `%{json}` is every variable as one JSON object and
/// `%{header_json}` the response's fields; `%header{name}` one field. An unknown variable prints
/// nothing and a warning on stderr, as in curl.
enum WriteOut {
    /// A variable's value, typed for `%{json}` (numbers unquoted, absent ones null).
    enum Value {
        case text(String?)
        case integer(Int64)
        case seconds(Double)

        var plain: String {
            switch self {
            case .text(let text): return text ?? ""
            case .integer(let n): return String(n)
            case .seconds(let s): return formatSeconds(s)
            }
        }

        var json: String {
            switch self {
            case .text(let text): return text.map(jsonString) ?? "null"
            case .integer(let n): return String(n)
            case .seconds(let s): return formatSeconds(s)
            }
        }
    }

    /// The variables, in the order `%{json}` lists them (curl's, alphabetical).
    static let names = ["cache_status", "certs", "content_type", "errormsg", "exitcode", "filename_effective", "http_code",
                        "http_version", "local_ip", "local_port", "method", "num_certs", "num_connects", "num_headers", "num_redirects",
                        "num_retries", "redirect_url", "referer", "remote_ip",
                        "remote_port", "response_code", "reused", "scheme", "size_download", "size_header", "size_request", "size_upload",
                        "speed_download", "speed_upload", "ssl_verify_result", "time_appconnect", "time_connect",
                        "time_namelookup", "time_posttransfer", "time_pretransfer", "time_queue", "time_redirect", "time_starttransfer",
                        "time_total",
                        "tls_resumed", "url", "url_effective", "urlnum"]

    static func value(_ name: String, _ r: TransferReport) -> Value? {
        let m = r.metrics
        let start = m.startedAt
        func since(_ end: UInt64) -> Value { .seconds(start > 0 && end >= start ? Double(end - start) / 1e9 : 0) }
        let total = start > 0 && m.completedAt >= start ? Double(m.completedAt - start) / 1e9 : 0
        switch name {
        case "http_code", "response_code": return .integer(Int64(r.status))
        case "size_download": return .integer(Int64(m.bodyBytesReceived))
        // curl's: the last request's body (as sent, chunked framing included), and every byte of
        // every request the transfer sent, heads and bodies, redirects included.
        case "size_upload": return .integer(Int64(r.uploadBytes))
        case "size_request": return .integer(Int64(m.bytesSent))
        case "size_header": return .integer(Int64(r.headerBytes))
        case "time_total": return since(m.completedAt)
        case "time_namelookup": return .seconds(CurlTimeline.seconds(r.timeline.namelookup))
        case "time_connect": return .seconds(CurlTimeline.seconds(r.timeline.connect))
        case "time_appconnect": return .seconds(CurlTimeline.seconds(r.timeline.appconnect))
        case "time_pretransfer": return .seconds(CurlTimeline.seconds(r.timeline.pretransfer))
        case "time_posttransfer": return .seconds(CurlTimeline.seconds(r.timeline.posttransfer))
        case "time_starttransfer": return .seconds(CurlTimeline.seconds(r.timeline.starttransfer))
        case "time_redirect": return .seconds(CurlTimeline.seconds(r.timeline.redirect))
        case "time_queue": return .seconds(m.enqueuedAt > 0 && start >= m.enqueuedAt ? Double(start - m.enqueuedAt) / 1e9 : 0)
        case "num_connects": return .integer(Int64(m.connectionsOpened))
        case "num_redirects": return .integer(Int64(m.redirects))
        case "num_retries": return .integer(Int64(m.retries))
        case "num_headers": return .integer(Int64(r.head?.headers.count ?? 0))
        case "url_effective": return .text(r.effectiveURL)
        case "url": return .text(r.url)
        case "urlnum": return .integer(Int64(r.urlIndex))
        case "method": return .text(r.method)
        case "scheme": return .text(r.effectiveURL.hasPrefix("https:") ? "HTTPS" : "HTTP")
        case "http_version": return .text(r.head?.versionText ?? "0")
        case "content_type": return .text(r.head?.headers["Content-Type"])
        case "exitcode": return .integer(Int64(r.exitCode))
        case "errormsg": return .text(r.errorMessage.isEmpty ? nil : r.errorMessage)
        case "filename_effective": return .text(r.filename.isEmpty ? nil : r.filename)
        case "referer": return .text(r.referer)
        case "redirect_url": return .text(redirectURL(r))
        case "local_ip": return .text(r.localAddress?.ipDescription ?? "")
        case "local_port": return .integer(Int64(r.localAddress?.port ?? 0))
        case "remote_ip": return .text(remoteIP(m.remoteAddress))
        case "remote_port": return .integer(Int64(m.remoteAddress.split(separator: ":").last.flatMap { Int($0) } ?? 0))
        case "speed_download": return .integer(total > 0 ? Int64(Double(m.bodyBytesReceived) / total) : 0)
        case "speed_upload": return .integer(total > 0 ? Int64(Double(r.uploadBytes) / total) : 0)
        case "ssl_verify_result": return .integer(Int64(m.tlsVerifyResult))
        case "reused": return .integer(m.reusedConnection ? 1 : 0)
        case "tls_resumed": return .integer(m.tlsResumed ? 1 : 0)
        case "cache_status": return .text(r.cacheStatus)
        case "certs": return .text(r.certificates.map(\.text).joined())
        case "num_certs": return .integer(Int64(r.certificates.count))
        default: return nil
        }
    }

    /// The output, in pieces for stdout (fd 1) and stderr (fd 2), in order.
    static func render(_ format: String, _ r: TransferReport) -> [(fd: Int32, text: String)] {
        var pieces: [(fd: Int32, text: String)] = []
        var out = ""
        var fd: Int32 = 1
        func switchTo(_ next: Int32) {
            if !out.isEmpty { pieces.append((fd, out)) }
            out = ""
            fd = next
        }
        let chars = Array(format)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "%", i + 1 < chars.count, chars[i + 1] == "%" {
                out.append("%")
                i += 2
            } else if c == "%", i + 1 < chars.count, chars[i + 1] == "{", let close = chars[(i + 2)...].firstIndex(of: "}") {
                let name = String(chars[(i + 2)..<close])
                switch name {
                case "stdout": switchTo(1)
                case "stderr": switchTo(2)
                case "onerror":
                    // The rest only when the transfer failed.
                    if r.exitCode == 0 {
                        switchTo(fd)
                        return pieces
                    }
                case "json": out += json(r)
                case "header_json": out += headerJSON(r.head)
                case "http_code", "response_code": out += format3(r.status)
                default:
                    if let value = value(name, r) {
                        out += value.plain
                    } else {
                        switchTo(fd)
                        pieces.append((2, "courier: unknown --write-out variable: '\(name)'\n"))
                    }
                }
                i = close + 1
            } else if c == "%", String(chars[i...].prefix(8)) == "%header{", let close = chars[(i + 8)...].firstIndex(of: "}") {
                out += r.head?.headers[String(chars[(i + 8)..<close])] ?? ""
                i = close + 1
            } else if c == "\\", i + 1 < chars.count {
                switch chars[i + 1] {
                case "n": out += "\n"
                case "r": out += "\r"
                case "t": out += "\t"
                case "\\": out += "\\"
                default: out.append(c); out.append(chars[i + 1])
                }
                i += 2
            } else {
                out.append(c)
                i += 1
            }
        }
        switchTo(fd)
        return pieces
    }

    /// Where the final response would have redirected (a 3xx with a Location not followed: no
    /// -L, or --max-redirs reached), as an absolute URL; nil otherwise.
    static func redirectURL(_ r: TransferReport) -> String? {
        guard let head = r.head, (300..<400).contains(head.status), let location = head.headers["Location"],
              let base = try? CourierURL(parsing: r.effectiveURL) else { return nil }
        return (try? base.resolving(location))?.description
    }

    /// `%{json}`: every variable, one object.
    static func json(_ r: TransferReport) -> String {
        "{" + names.compactMap { name in value(name, r).map { "\"\(name)\":\($0.json)" } }.joined(separator: ",") + "}"
    }

    /// `%{header_json}`: the final response's fields, names lower-cased, each with its values in order.
    static func headerJSON(_ head: ResponseHead?) -> String {
        guard let head else { return "{}" }
        var order: [String] = []
        var values: [String: [String]] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            if values[key] == nil { order.append(key) }
            values[key, default: []].append(value)
        }
        return "{" + order.map { "\(jsonString($0)):[\(values[$0]!.map(jsonString).joined(separator: ","))]" }.joined(separator: ",\n") + "\n}"
    }

    static func jsonString(_ text: String) -> String {
        var out = ""
        JSONValue.writeString(text, to: &out)
        return out
    }

    static func format3(_ status: Int) -> String {
        status == 0 ? "000" : String(status)
    }

    static func formatSeconds(_ value: Double) -> String {
        let micros = Int((value * 1e6).rounded())
        let whole = micros / 1_000_000
        let frac = String(micros % 1_000_000)
        return "\(whole)." + String(repeating: "0", count: 6 - frac.count) + frac
    }

    static func remoteIP(_ address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        return address.split(separator: ":").first.map(String.init) ?? ""
    }
}
