/// How a connection proves who the server is, and who the client is.
///
/// Safe by default: the chain is verified against the system trust store (OpenSSL's default
/// paths, which honour `SSL_CERT_FILE` and `SSL_CERT_DIR`), the host name or IP address must
/// match, TLS 1.2 is the minimum. Everything here is part of the connection pool's key: a pooled
/// connection is only ever reused by requests whose whole TLS configuration is equal (the class of
/// bug behind curl CVE-2016-5420 and CVE-2022-27782).
public struct TLSConfiguration: Sendable, Hashable {
    /// Whether the server's certificate is checked at all.
    public enum Verification: Sendable, Hashable {
        /// Chain to a trusted root, validity dates, host name or IP address. The default.
        case full
        /// Accept any certificate from anyone. For test servers only: the connection is encrypted
        /// to whoever answered, which is no protection against an attacker in the path. Pins, when
        /// configured, are still enforced.
        case insecureAcceptAnyCertificate
    }

    /// TLS protocol versions.
    public enum Version: Int, Sendable, Hashable, Comparable {
        /// TLS 1.0 (RFC 2246): allowed as a minimum only where the system's OpenSSL policy still
        /// permits it (Debian's does not: its security level needs TLS 1.2), as curl's `--tlsv1.0`.
        case tls10 = 0x0301
        /// TLS 1.1 (RFC 4346), with the same caveat as `tls10`.
        case tls11 = 0x0302
        /// TLS 1.2 (RFC 5246).
        case tls12 = 0x0303
        /// TLS 1.3 (RFC 8446).
        case tls13 = 0x0304

        public static func < (a: Version, b: Version) -> Bool { a.rawValue < b.rawValue }
    }

    /// The settings, in one shared box: every request's options carry a configuration, and
    /// copying the box is one retain where copying the fields was one per string and array.
    private struct Values: Sendable, Hashable {
        var verification: Verification = .full
        var useSystemTrustStore = true
        var caFile: String?
        var caDirectory: String?
        var clientCertificateFile: String?
        var clientKeyFile: String?
        var clientKeyPassphrase: String?
        var minimumVersion: Version = .tls12
        var maximumVersion: Version?
        var pins: [PinSet] = []
        var pinningMode: PinningMode = .enforce
        var trustEvaluator: TrustEvaluator?
        var sessionResumption = true
        var cipherList: String?
        var tls13CipherSuites: String?
        var curves: String?
        var offersALPN = true
    }

    private final class Box: @unchecked Sendable {
        var values: Values
        init(_ values: Values) { self.values = values }
    }

    /// Every default configuration shares one box (a request that changes nothing allocates
    /// nothing).
    private static let defaults = Box(Values())
    private var box = TLSConfiguration.defaults

    @inline(__always)
    private mutating func unique() -> Box {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.values) }
        return box
    }

    /// Certificate checking.
    public var verification: Verification {
        get { box.values.verification }
        set { unique().values.verification = newValue }
    }
    /// Trust the operating system's roots (OpenSSL's default verify paths).
    public var useSystemTrustStore: Bool {
        get { box.values.useSystemTrustStore }
        set { unique().values.useSystemTrustStore = newValue }
    }
    /// Extra trusted roots: a PEM file (curl's `--cacert`).
    public var caFile: String? {
        get { box.values.caFile }
        set { unique().values.caFile = newValue }
    }
    /// Extra trusted roots: a directory of hashed PEM files (curl's `--capath`).
    public var caDirectory: String? {
        get { box.values.caDirectory }
        set { unique().values.caDirectory = newValue }
    }
    /// Client certificate chain, PEM (curl's `--cert`), for servers that demand one.
    public var clientCertificateFile: String? {
        get { box.values.clientCertificateFile }
        set { unique().values.clientCertificateFile = newValue }
    }
    /// Client private key, PEM (curl's `--key`); the certificate file is used when nil.
    public var clientKeyFile: String? {
        get { box.values.clientKeyFile }
        set { unique().values.clientKeyFile = newValue }
    }
    /// Passphrase of an encrypted client key (curl's `--pass`).
    public var clientKeyPassphrase: String? {
        get { box.values.clientKeyPassphrase }
        set { unique().values.clientKeyPassphrase = newValue }
    }
    /// Lowest protocol version offered.
    public var minimumVersion: Version {
        get { box.values.minimumVersion }
        set { unique().values.minimumVersion = newValue }
    }
    /// Highest protocol version offered; nil for the newest the library has.
    public var maximumVersion: Version? {
        get { box.values.maximumVersion }
        set { unique().values.maximumVersion = newValue }
    }
    /// Public-key pins, checked on every connection (every redirect hop included).
    public var pins: [PinSet] {
        get { box.values.pins }
        set { unique().values.pins = newValue }
    }
    /// Whether a pin mismatch fails the connection or is only reported to `trustEvaluator`.
    public var pinningMode: PinningMode {
        get { box.values.pinningMode }
        set { unique().values.pinningMode = newValue }
    }
    /// The application's own trust decision, consulted after the built-in checks.
    public var trustEvaluator: TrustEvaluator? {
        get { box.values.trustEvaluator }
        set { unique().values.trustEvaluator = newValue }
    }
    /// Reuse TLS sessions (tickets) when reconnecting to the same origin: the reconnect skips the
    /// full handshake. Off only to measure or test full handshakes.
    public var sessionResumption: Bool {
        get { box.values.sessionResumption }
        set { unique().values.sessionResumption = newValue }
    }

    /// The cipher list for TLS 1.2 and below, in OpenSSL's syntax (curl's `--ciphers`:
    /// "ECDHE-RSA-AES128-GCM-SHA256:!aNULL"); nil for OpenSSL's default. A list that names no
    /// cipher OpenSSL has fails every request with `.tlsCipher`.
    public var cipherList: String? {
        get { box.values.cipherList }
        set { unique().values.cipherList = newValue }
    }
    /// The TLS 1.3 cipher suites, colon-separated (curl's `--tls13-ciphers`:
    /// "TLS_AES_128_GCM_SHA256"); nil for OpenSSL's default.
    public var tls13CipherSuites: String? {
        get { box.values.tls13CipherSuites }
        set { unique().values.tls13CipherSuites = newValue }
    }
    /// The key-exchange groups offered, colon-separated (curl's `--curves`: "X25519:P-256");
    /// nil for OpenSSL's default.
    public var curves: String? {
        get { box.values.curves }
        set { unique().values.curves = newValue }
    }
    /// Whether the handshake offers ALPN (the protocols Courier speaks). Off only for servers that
    /// mishandle the extension (curl's `--no-alpn`).
    public var offersALPN: Bool {
        get { box.values.offersALPN }
        set { unique().values.offersALPN = newValue }
    }

    public static func == (a: TLSConfiguration, b: TLSConfiguration) -> Bool {
        a.box === b.box || a.box.values == b.box.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(box.values)
    }

    /// The safe defaults.
    public init() {}

    /// Verification on, extra roots from a PEM file.
    public init(caFile: String) {
        self.caFile = caFile
    }

    /// Whether pins apply to `host`.
    func pinSets(for host: String) -> [PinSet] {
        pins.filter { $0.hosts.isEmpty || $0.hosts.contains(host) }
    }
}

/// What happens when no certificate in the chain matches a pin.
public enum PinningMode: Sendable, Hashable {
    /// The connection fails with `.tlsPinMismatch`.
    case enforce
    /// The connection proceeds; `TrustEvaluator.pinMismatch` is told.
    case reportOnly
}

/// Acceptable public keys for some hosts, as SHA-256 hashes of the DER SubjectPublicKeyInfo
/// (curl's `sha256//` form, HPKP's pin-sha256).
///
/// A connection passes when any certificate of the verified chain (leaf, intermediate or root)
/// has a listed key. List a backup key (the next certificate's, or a second CA's) beside the
/// current one, and certificate renewal does not lock clients out (the AFNetworking #3039 and
/// Alamofire #2469 failure).
public struct PinSet: Sendable, Hashable {
    /// Hosts the pins apply to; empty means every host of the configuration.
    public var hosts: Set<String>
    /// SHA-256 digests of SubjectPublicKeyInfo, 32 bytes each.
    public var sha256: Set<[UInt8]>

    /// Pins from curl-style strings: `"sha256//BASE64"` (several may be joined with ";").
    public init(hosts: Set<String> = [], pins: [String]) throws(CourierError) {
        self.hosts = Set(hosts.map { $0.lowercased() })
        var digests = Set<[UInt8]>()
        for entry in pins.flatMap({ $0.split(separator: ";") }) {
            let text = String(entry).trimmingSpaces
            guard text.hasPrefix("sha256//"), let digest = Base64.decode(String(text.dropFirst(8))), digest.count == 32 else {
                throw CourierError(.invalidArgument, "pin \"\(text)\" is not sha256// followed by 32 bytes of base64")
            }
            digests.insert(digest)
        }
        guard !digests.isEmpty else { throw CourierError(.invalidArgument, "no pins given") }
        sha256 = digests
    }

    /// Pins from raw digests.
    public init(hosts: Set<String> = [], sha256: Set<[UInt8]>) {
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.sha256 = sha256
    }
}

/// What an application's trust hook sees.
public struct TrustContext: Sendable {
    /// The host connected to.
    public var host: String
    /// The port.
    public var port: UInt16
    /// The server's chain, leaf first, DER-encoded.
    public var chain: [[UInt8]]
    /// Courier's verdict: nil when the chain and host verified, otherwise why not.
    public var verificationError: CourierError?
    /// Whether a pin matched (nil when no pins apply).
    public var pinMatched: Bool?
    /// SHA-256 of each chain certificate's public key, leaf first (what a pin would name).
    public var publicKeySHA256: [[UInt8]]
}

/// The application's trust decision (AFNetworking's authentication-challenge block, done on
/// Linux). A class so the configuration can compare by identity: two configurations with the same
/// evaluator object may share connections, with different ones they never do.
///
/// Both closures run on Courier's loop thread during the connection's handshake; they must be
/// quick and must not block.
public final class TrustEvaluator: Sendable, Hashable {
    /// Decides whether to trust the server. Return true to accept (even a chain Courier rejected),
    /// false to reject (even one Courier accepted).
    public let evaluate: @Sendable (TrustContext) -> Bool
    /// Told about pin mismatches in `.reportOnly` mode (and in `.enforce` mode before failing).
    public let pinMismatch: (@Sendable (TrustContext) -> Void)?

    /// Creates an evaluator; `TrustEvaluator { context in ... }` supplies `evaluate`.
    public init(evaluate: @escaping @Sendable (TrustContext) -> Bool = { $0.verificationError == nil },
                pinMismatch: (@Sendable (TrustContext) -> Void)? = nil) {
        self.evaluate = evaluate
        self.pinMismatch = pinMismatch
    }

    public static func == (a: TrustEvaluator, b: TrustEvaluator) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
