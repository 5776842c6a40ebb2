import Courier
import CourierCore

/// What `-w` can print about one transfer.
struct TransferReport {
    var url: String
    var effectiveURL: String
    var status: Int
    var head: ResponseHead?
    var metrics: TransferMetrics
    var exitCode: Int32
    var errorMessage: String
    var headerBytes: Int
    /// hit, miss, revalidated, stale or bypass.
    var cacheStatus: String
}

/// curl's `--write-out` format: `%{variable}`, `%%`, and `\n`, `\r`, `\t` escapes.
enum WriteOut {
    static func render(_ format: String, _ r: TransferReport) -> String {
        var out = ""
        var chars = Array(format)
        var i = 0
        func seconds(_ start: UInt64, _ end: UInt64) -> String {
            guard start > 0, end >= start else { return "0.000000" }
            return formatSeconds(Double(end - start) / 1e9)
        }
        let m = r.metrics
        let start = m.startedAt
        while i < chars.count {
            let c = chars[i]
            if c == "%", i + 1 < chars.count, chars[i + 1] == "%" {
                out.append("%")
                i += 2
            } else if c == "%", i + 1 < chars.count, chars[i + 1] == "{", let close = chars[(i + 2)...].firstIndex(of: "}") {
                let name = String(chars[(i + 2)..<close])
                switch name {
                case "http_code", "response_code": out += String(format3(r.status))
                case "size_download": out += String(m.bodyBytesReceived)
                case "size_upload": out += String(max(0, Int64(m.bytesSent)))
                case "size_header": out += String(r.headerBytes)
                case "time_total": out += seconds(start, m.completedAt)
                case "time_namelookup": out += m.dnsEnd > 0 ? seconds(start, m.dnsEnd) : "0.000000"
                case "time_connect": out += m.connectEnd > 0 ? seconds(start, m.connectEnd) : "0.000000"
                case "time_appconnect": out += m.tlsEnd > 0 ? seconds(start, m.tlsEnd) : "0.000000"
                case "time_pretransfer": out += m.requestStart > 0 ? seconds(start, m.requestStart) : "0.000000"
                case "time_starttransfer": out += m.firstByte > 0 ? seconds(start, m.firstByte) : "0.000000"
                case "time_queue": out += seconds(m.enqueuedAt, m.startedAt)
                case "num_connects": out += String(m.connectionsOpened)
                case "num_redirects": out += String(m.redirects)
                case "url_effective": out += r.effectiveURL
                case "url": out += r.url
                case "content_type": out += r.head?.headers["Content-Type"] ?? ""
                case "exitcode": out += String(r.exitCode)
                case "errormsg": out += r.errorMessage
                case "remote_ip": out += remoteIP(m.remoteAddress)
                case "remote_port": out += m.remoteAddress.split(separator: ":").last.map(String.init) ?? ""
                case "speed_download":
                    let total = Double(m.completedAt &- start) / 1e9
                    out += total > 0 ? String(Int(Double(m.bodyBytesReceived) / total)) : "0"
                case "ssl_verify_result": out += String(m.tlsVerifyResult)
                case "reused": out += m.reusedConnection ? "1" : "0"
                case "tls_resumed": out += m.tlsResumed ? "1" : "0"
                case "cache_status": out += r.cacheStatus
                default: out += "%{" + name + "}"
                }
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
        chars.removeAll()
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
