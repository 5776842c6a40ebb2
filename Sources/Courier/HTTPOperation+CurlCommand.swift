import CourierCore

/// The operation as a curl command line, and its description.
extension HTTPOperation {
    // MARK: - Description

    /// A curl command line that sends the same request, for logs and bug reports
    /// (MKNetworkKit's `curlCommandLineString`).
    public var curlCommand: String { draft.curlCommand }

    public var description: String { "HTTPOperation(\(method) \(urlString), \(state))" }
}

/// The command line itself, from the request as it is drafted (also the C ABI's
/// `courier_request_curl_command` and Python's `curl_command`).
extension RequestDraft {
    package var curlCommand: String {
        var parts = ["curl"]
        if method != .get || body != nil || (!parameters.isEmpty && !ParameterEncoding.usesQuery(method)) {
            if method == .head { parts.append("-I") } else { parts += ["-X", method.rawValue] }
        }
        let resolved = try? resolvedURL()
        let url = resolved.map { u -> String in
            guard let user = u.user else { return u.description }
            return "\(u.scheme.rawValue)://\(user)\(u.password.map { ":" + $0 } ?? "")@\(u.hostHeader)\(u.target)"
        } ?? urlString
        parts.append(Self.shellQuote(url))
        let sentHeaders = resolved.map { resolvedHeaders(url: $0) } ?? headers
        let (requestBody, contentType) = resolvedBody()
        for (name, value) in sentHeaders where !(name.lowercased() == "authorization" && resolved?.user != nil) {
            parts += ["-H", Self.shellQuote("\(name): \(value)")]
        }
        // curl sends headers of its own (User-Agent, Accept); "Name:" removes them as Courier did.
        for name in suppressedHeaders { parts += ["-H", Self.shellQuote(name + ":")] }
        if let contentType, !sentHeaders.contains("Content-Type") { parts += ["-H", Self.shellQuote("Content-Type: \(contentType)")] }
        switch requestBody {
        case .empty:
            break
        case .bytes(let bytes):
            if let text = String(validating: bytes, as: UTF8.self) {
                parts += ["--data-binary", Self.shellQuote(text)]
            } else {
                parts += ["--data-binary", "@-", "# \(bytes.count) binary bytes on stdin"]
            }
        case .file(let path):
            parts += ["--data-binary", Self.shellQuote("@" + path)]
        case .multipart(let form):
            for part in form.parts {
                switch part {
                case .field(let name, let value): parts += ["-F", Self.shellQuote("\(name)=\(value)")]
                case .data(let name, let bytes, let mime, _): parts += ["-F", Self.shellQuote("\(name)=<-;type=\(mime)"), "# \(bytes.count) bytes"]
                case .file(let name, let path, let mime, let fileName):
                    parts += ["-F", Self.shellQuote("\(name)=@\(path);type=\(mime);filename=\(fileName)")]
                }
            }
        case .stream:
            parts += ["-T", "-"]
        }
        if options.decompress { parts.append("--compressed") }
        parts += Self.routeArguments(options.route)
        return parts.joined(separator: " ")
    }

    /// Where the connection goes and comes from, as curl's flags (the same socket, the same
    /// local end: the command must reach the same server the same way).
    static func routeArguments(_ route: ConnectRoute?) -> [String] {
        guard let route else { return [] }
        var parts: [String] = []
        switch route.unixSocket {
        case .path(let path)?: parts += ["--unix-socket", shellQuote(path)]
        case .abstract(let name)?: parts += ["--abstract-unix-socket", shellQuote(name)]
        case nil: break
        }
        switch route.local?.source {
        case .address(let address)?: parts += ["--interface", shellQuote("host!" + address)]
        case .interface(let name)?: parts += ["--interface", shellQuote("if!" + name)]
        case nil: break
        }
        if let ports = route.local?.ports {
            parts += ["--local-port", ports.count > 1 ? "\(ports.lowerBound)-\(ports.upperBound)" : "\(ports.lowerBound)"]
        }
        return parts
    }

    static func shellQuote(_ s: String) -> String {
        if !s.isEmpty, s.utf8.allSatisfy({ b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || "-_./:=@%+,".utf8.contains(b)
        }) { return s }
        return "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
