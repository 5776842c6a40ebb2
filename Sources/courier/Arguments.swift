import Courier
import CourierCore

/// Parses curl-style arguments: `-X POST`, `-XPOST`, `--request POST`, `-sS` (combined flags).
enum ArgumentParser {
    /// Flags without a value.
    /// (`-:`, curl's --next, splits the command line before any flag is read: `parseGroups`.)
    static let shortFlags: Set<Character> = ["j", "i", "I", "L", "f", "s", "S", "v", "O", "Z", "h", "V", "#", "g", "k",
                                             "G", "R", "J", "M", "4", "6", "p", ":", "n"]
    /// Flags that take a value.
    static let shortWithValue: Set<Character> = ["X", "H", "d", "o", "m", "w", "A", "u", "E", "D", "F", "T", "C", "b", "c", "x", "U",
                                                 "e", "r", "K", "z"]

    /// The command line as curl reads it: groups of URLs and their options, separated by
    /// `-:`/`--next`, each starting from the defaults; the global options (`-v`, `-s`, `-Z`,
    /// ...) apply to every group wherever they appear.
    static func parseGroups(_ given: [String]) throws(UsageError) -> [CommandLineOptions] {
        // -K/--config files are read where they appear, their options in place of the flag.
        let arguments = try ConfigFile.expand(given)
        var groups: [[String]] = [[]]
        for argument in arguments {
            if argument == "--next" || argument == "-:" {
                groups.append([])
            } else {
                groups[groups.count - 1].append(argument)
            }
        }
        var parsed: [CommandLineOptions] = []
        for group in groups { parsed.append(try parse(expanded: group)) }
        GlobalOptions.share(&parsed)
        return parsed
    }

    static func parse(_ given: [String]) throws(UsageError) -> CommandLineOptions {
        try parse(expanded: try ConfigFile.expand(given))
    }

    private static func parse(expanded arguments: [String]) throws(UsageError) -> CommandLineOptions {
        var options = CommandLineOptions()
        var index = 0
        func value(for name: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(message: "option \(name): requires parameter") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--"), argument.count > 2 {
                try applyLong(argument, to: &options, value: value)
            } else if argument.hasPrefix("-"), argument.count > 1 {
                var flags = Array(argument.dropFirst())
                while !flags.isEmpty {
                    let flag = flags.removeFirst()
                    if shortWithValue.contains(flag) {
                        let rest = String(flags)
                        flags = []
                        let v = rest.isEmpty ? try value(for: "-\(flag)") : rest
                        try applyShort(flag, value: v, to: &options)
                    } else if shortFlags.contains(flag) {
                        try applyShort(flag, value: nil, to: &options)
                    } else {
                        throw UsageError(message: "option -\(flag): is unknown")
                    }
                }
            } else {
                options.urls.append(argument)
            }
            index += 1
        }
        // curl's `--help all`, `-h tls`: a category word after --help is not a URL.
        if options.help, let first = options.urls.first, first == "all" || first == "category" || FlagDoc.Category(rawValue: first) != nil {
            options.helpCategory = options.urls.removeFirst()
        }
        return options
    }

    private static func applyShort(_ flag: Character, value: String?, to o: inout CommandLineOptions) throws(UsageError) {
        switch flag {
        case "X": o.method = value
        case "H": o.headers.append(try parseHeader(value!))
        case "d": o.data.append(DataArgument(text: value!, kind: .urlencodedAscii))
        case "o": o.outputs.append(value!)
        case "m": o.maxTime = try seconds(value!, "-m")
        case "w": o.writeOut = value
        case "A": o.userAgent = value
        case "u": o.user = value
        case "i": o.include = true
        case "n": o.netrc = .home
        case "I": o.head = true
        case "L": o.location = true
        case "f": o.fail = true
        case "s": o.silent = true
        case "S": o.showError = true
        case "v": o.verbose = true
        case "O": o.remoteNameCount += 1
        case "Z": o.parallel = true
        case "h": o.help = true
        case "V": o.version = true
        case "#": o.progressBar = true; o.forceProgressBar = true
        case "g": o.globOff = true
        case "k": o.insecure = true
        case "E": o.certificate = value
        case "D": o.dumpHeader = value
        case "F": o.forms.append((value!, false))
        case "T": o.uploadFile = value
        case "b": o.cookies.append(value!)
        case "c": o.cookieJarPath = value
        case "j": o.junkSessionCookies = true
        case "C": try continueAt(value!, &o)
        case "x": (o.proxy, o.proxyKind) = (value, .http)
        case "U": o.proxyUser = value
        case "G": o.get = true
        case "e": o.referer = value
        case "z": o.timeCondition = value
        case "r": o.range = value
        case "R": o.remoteTime = true
        case "J": o.remoteHeaderName = true
        case "M": o.manual = true
        case "4": o.route = (o.route ?? ConnectRoute()).with { $0.family = .ipv4 }
        case "6": o.route = (o.route ?? ConnectRoute()).with { $0.family = .ipv6 }
        case "p": o.proxyTunnel = true
        default: throw UsageError(message: "option -\(flag): is unknown")
        }
    }

    private static func applyLong(_ argument: String, to o: inout CommandLineOptions, value: (String) throws(UsageError) -> String) throws(UsageError) {
        switch argument {
        case "--request": o.method = try value(argument)
        case "--header": o.headers.append(try parseHeader(try value(argument)))
        case "--data", "--data-ascii": o.data.append(DataArgument(text: try value(argument), kind: .urlencodedAscii))
        case "--data-binary": o.data.append(DataArgument(text: try value(argument), kind: .binary))
        case "--data-raw": o.data.append(DataArgument(text: try value(argument), kind: .raw))
        case "--data-urlencode": o.data.append(DataArgument(text: try value(argument), kind: .urlencode))
        case "--get": o.get = true
        case "--ipv4": o.route = (o.route ?? ConnectRoute()).with { $0.family = .ipv4 }
        case "--ipv6": o.route = (o.route ?? ConnectRoute()).with { $0.family = .ipv6 }
        case "--resolve":
            let text = try value(argument)
            var route = o.route ?? ConnectRoute()
            do { try route.addResolve(text) } catch { throw UsageError(message: error.message) }
            o.route = route
        case "--unix-socket":
            // (Checked where curl checks it: a path too long fails the transfer with exit 6.)
            let path = try value(argument)
            o.route = (o.route ?? ConnectRoute()).with { $0.unixSocket = .path(path) }
        case "--interface":
            let text = try value(argument)
            let binding: LocalBinding
            do { binding = try LocalBinding(interface: text) } catch { throw UsageError(message: error.message) }
            o.route = (o.route ?? ConnectRoute()).with { $0.local = LocalBinding(source: binding.source, ports: $0.local?.ports) }
        case "--local-port":
            let text = try value(argument)
            let ports: ClosedRange<UInt16>
            do { ports = try LocalBinding.ports(parsing: text) } catch { throw UsageError(message: error.message) }
            o.route = (o.route ?? ConnectRoute()).with { $0.local = LocalBinding(source: $0.local?.source, ports: ports) }
        case "--abstract-unix-socket":
            let name = try value(argument)
            o.route = (o.route ?? ConnectRoute()).with { $0.unixSocket = .abstract(name) }
        case "--connect-to":
            let text = try value(argument)
            var route = o.route ?? ConnectRoute()
            do { route.redirects.append(try ConnectRoute.Redirect(parsing: text)) } catch { throw UsageError(message: error.message) }
            o.route = route
        case "--referer": o.referer = try value(argument)
        case "--time-cond": o.timeCondition = try value(argument)
        case "--range": o.range = try value(argument)
        case "--fail-with-body": o.failWithBody = true
        case "--output-dir": o.outputDirectory = try value(argument)
        case "--remote-time": o.remoteTime = true
        case "--remote-header-name": o.remoteHeaderName = true
        case "--clobber": o.clobber = true
        case "--no-clobber": o.clobber = false
        case "--http1.1":
            o.http10 = false
            o.httpVersion = .http1Only
        case "--http1.0":
            o.http10 = true
            o.httpVersion = .http1Only
        case "--http2":
            o.http10 = false
            o.httpVersion = .http2Preferred
        case "--http2-prior-knowledge":
            o.http10 = false
            o.httpVersion = .http2Only
        case "--http3", "--http3-only":
            throw UsageError(message: "option \(argument): Courier speaks HTTP/1.1 and HTTP/2, not HTTP/3", code: ExitCode.notBuiltIn)
        case "--json": o.json.append(DataArgument(text: try value(argument), kind: .binary))
        case "--output": o.outputs.append(try value(argument))
        case "--remote-name": o.remoteNameCount += 1
        case "--remote-name-all": o.remoteNameAll = true
        case "--include": o.include = true
        case "--head": o.head = true
        case "--location": o.location = true
        case "--max-redirs":
            guard let n = Int(try value(argument)), n >= -1 else { throw UsageError(message: "option --max-redirs: expected a proper numerical parameter") }
            o.maxRedirects = n
        case "--max-time": o.maxTime = try seconds(try value(argument), argument)
        case "--connect-timeout": o.connectTimeout = try seconds(try value(argument), argument)
        case "--fail": o.fail = true
        case "--compressed": o.compressed = true
        case "--max-filesize":
            guard let n = parseSize(try value(argument)) else { throw UsageError(message: "option --max-filesize: expected a proper numerical parameter") }
            o.maxFileSize = n
        case "--silent": o.silent = true
        case "--show-error": o.showError = true
        case "--verbose": o.verbose = true
        case "--trace-ascii": o.traceFile = try value(argument)
        case "--write-out": o.writeOut = try value(argument)
        case "--parallel": o.parallel = true
        case "--parallel-max":
            guard let n = Int(try value(argument)), n > 0 else { throw UsageError(message: "option --parallel-max: expected a proper numerical parameter") }
            o.parallelMax = min(n, 300)
        case "--user-agent": o.userAgent = try value(argument)
        case "--user": o.user = try value(argument)
        case "--progress-bar": o.progressBar = true; o.forceProgressBar = true
        case "--no-progress-meter": o.progressBar = false
        case "--url": o.urls.append(try value(argument))
        case "--globoff": o.globOff = true
        case "--cacert": o.caFile = try value(argument)
        case "--capath": o.caPath = try value(argument)
        case "--insecure": o.insecure = true
        case "--pinnedpubkey": o.pinnedPublicKey = try value(argument)
        case "--cert": o.certificate = try value(argument)
        case "--key": o.key = try value(argument)
        case "--pass": o.passphrase = try value(argument)
        case "--tlsv1", "--tlsv1.0": o.tlsMinimum = .tls10
        case "--tlsv1.1": o.tlsMinimum = .tls11
        case "--tlsv1.2": o.tlsMinimum = .tls12
        case "--tlsv1.3": o.tlsMinimum = .tls13
        case "--no-sessionid": o.noSessionID = true
        case "--sessionid": o.noSessionID = false
        case "--ciphers": o.ciphers = try value(argument)
        case "--tls13-ciphers": o.tls13Ciphers = try value(argument)
        case "--curves": o.curves = try value(argument)
        case "--no-alpn": o.noALPN = true
        case "--alpn": o.noALPN = false
        case "--proxytunnel": o.proxyTunnel = true
        case "--no-proxytunnel": o.proxyTunnel = false
        case "--expect100-timeout": o.expect100Timeout = try seconds(try value(argument), argument)
        case "--happy-eyeballs-timeout-ms":
            guard let n = UInt64(try value(argument)) else {
                throw UsageError(message: "option --happy-eyeballs-timeout-ms: expected a proper numerical parameter")
            }
            o.happyEyeballsMillis = n
        case "--rate": o.rate = try rate(try value(argument))
        case "--parallel-max-host":
            guard let n = Int(try value(argument)), n >= 0 else { throw UsageError(message: "option --parallel-max-host: expected a proper numerical parameter") }
            o.parallelMaxHost = n == 0 ? nil : n
        case "--cache-dir": o.cacheDirectory = try value(argument)
        case "--outbox": o.outbox = try value(argument)
        case "--flush": o.flush = true
        case "--watch-network": o.watchNetwork = true
        case "--wifi-only": o.wifiOnly = true
        case "--dump-header": o.dumpHeader = try value(argument)
        case "--form": o.forms.append((try value(argument), false))
        case "--form-string": o.forms.append((try value(argument), true))
        case "--upload-file": o.uploadFile = try value(argument)
        case "--continue-at": try continueAt(try value(argument), &o)
        case "--limit-rate":
            guard let n = parseSize(try value(argument)) else { throw UsageError(message: "option --limit-rate: expected a proper numerical parameter") }
            o.limitRate = n
        case "--create-dirs": o.createDirs = true
        case "--cookie": o.cookies.append(try value(argument))
        case "--cookie-jar": o.cookieJarPath = try value(argument)
        case "--junk-session-cookies": o.junkSessionCookies = true
        case "--oauth2-bearer": o.bearer = try value(argument)
        case "--digest": o.digest = true
        case "--netrc", "--netrc-optional": o.netrc = .home
        case "--netrc-file": o.netrc = .file(try value(argument))
        case "--hsts": o.hsts = try value(argument)
        case "--basic": o.digest = false
        case "--proxy": (o.proxy, o.proxyKind) = (try value(argument), .http)
        case "--socks5": (o.proxy, o.proxyKind) = (try value(argument), .socks5)
        case "--socks5-hostname": (o.proxy, o.proxyKind) = (try value(argument), .socks5h)
        case "--noproxy": o.noProxy = try value(argument)
        case "--proxy-user": o.proxyUser = try value(argument)
        case "--proxy-cacert": o.proxyCAFile = try value(argument)
        case "--proxy-capath": o.proxyCAPath = try value(argument)
        case "--proxy-insecure": o.proxyInsecure = true
        case "--proxy-cert": o.proxyCertificate = try value(argument)
        case "--proxy-key": o.proxyKey = try value(argument)
        case "--retry":
            guard let n = Int(try value(argument)), n >= 0 else { throw UsageError(message: "option --retry: expected a proper numerical parameter") }
            o.retry = n
        case "--retry-delay": o.retryDelay = try seconds(try value(argument), argument)
        case "--retry-max-time": o.retryMaxTime = try seconds(try value(argument), argument)
        case "--retry-all-errors": o.retryAllErrors = true
        case "--retry-connrefused": o.retryConnRefused = true
        case "--tls-max":
            switch try value(argument) {
            case "1.2": o.tlsMaximum = .tls12
            case "1.3", "default": o.tlsMaximum = .tls13
            default: throw UsageError(message: "option --tls-max: expected 1.2 or 1.3")
            }
        case "--help": o.help = true
        case "--manual": o.manual = true
        case "--man-page": o.manPage = true
        case "--version": o.version = true
        default: throw UsageError(message: "option \(argument): is unknown")
        }
    }

    /// curl's --rate "N/U": N transfer starts per U (s, m, h, d; a number before the unit
    /// multiplies it: "5/2s"); without "/U", per hour.
    static func rate(_ text: String) throws(UsageError) -> (count: Int, seconds: Double) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let count = Int(parts[0]), count > 0 else { throw UsageError(message: "option --rate: expected a proper numerical parameter") }
        guard parts.count == 2 else { return (count, 3600) }
        var unit = Substring(parts[1])
        let digits = unit.prefix { $0.isNumber }
        unit = unit.dropFirst(digits.count)
        let multiple = digits.isEmpty ? 1.0 : Double(digits) ?? 0
        let seconds: Double
        switch unit {
        case "s": seconds = 1
        case "m": seconds = 60
        case "h": seconds = 3600
        case "d": seconds = 86400
        default: throw UsageError(message: "option --rate: unsupported time unit \"\(parts[1])\"")
        }
        guard multiple > 0 else { throw UsageError(message: "option --rate: expected a proper numerical parameter") }
        return (count, seconds * multiple)
    }

    /// `-C -` continues from the output file's end; a numeric offset is not supported.
    private static func continueAt(_ text: String, _ o: inout CommandLineOptions) throws(UsageError) {
        guard text == "-" else { throw UsageError(message: "option -C: only '-C -' (continue where the output file ends) is supported") }
        o.continueAt = true
    }

    /// `Name: value` adds; `Name:` removes a header Courier would send; `Name;` sends it empty.
    static func parseHeader(_ text: String) throws(UsageError) -> (name: String, value: String?) {
        if let colon = text.firstIndex(of: ":") {
            let name = String(text[..<colon])
            let value = text[text.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            return (name, value.isEmpty ? nil : String(value))
        }
        if text.hasSuffix(";") { return (String(text.dropLast()), "") }
        throw UsageError(message: "header \"\(text)\" has no colon")
    }

    static func seconds(_ text: String, _ name: String) throws(UsageError) -> Double {
        guard let value = Double(text), value >= 0 else { throw UsageError(message: "option \(name): expected a proper numerical parameter") }
        return value
    }

    /// `1000`, `10k`, `5M`, `1G` (curl's suffixes, powers of 1024).
    static func parseSize(_ text: String) -> UInt64? {
        guard let last = text.last else { return nil }
        let multipliers: [Character: UInt64] = ["k": 1 << 10, "K": 1 << 10, "m": 1 << 20, "M": 1 << 20, "g": 1 << 30, "G": 1 << 30]
        if let multiplier = multipliers[last], let n = UInt64(text.dropLast()) { return n * multiplier }
        return UInt64(text)
    }
}

extension ConnectRoute {
    /// A copy changed by `change` (for the flags that each set one part).
    func with(_ change: (inout ConnectRoute) -> Void) -> ConnectRoute {
        var copy = self
        change(&copy)
        return copy
    }
}
