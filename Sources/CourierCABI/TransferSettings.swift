import Courier
import CourierCore

/// The C setters that configure a transfer's options, written once for the two places they
/// apply: a request (`courier_request_set_*`) and an engine's defaults for the requests it
/// creates afterwards (`courier_engine_set_*`, libcurl's share-the-settings habit without
/// copying handles). Each validates its C arguments and throws `.invalidArgument` with the reason.
enum TransferSetting {
    /// COURIER_TIMEOUT_*: milliseconds, 0 for no limit, COURIER_TIMEOUT_DEFAULT (-1) for
    /// `defaults`' value (an engine's for a request, the library's for an engine).
    static func timeout(_ options: inout TransferOptions, _ which: Int32, _ milliseconds: Int64,
                        defaults: Timeouts) throws(CourierError) {
        guard milliseconds >= -1 else { throw invalid("negative timeout") }
        func limit(_ standard: Nanoseconds?) -> Nanoseconds? {
            milliseconds == -1 ? standard : Nanoseconds.limit(milliseconds: milliseconds)
        }
        switch which {
        case 1: options.timeouts.queue = limit(defaults.queue)
        case 2: options.timeouts.connect = limit(defaults.connect)
        case 3: options.timeouts.firstByte = limit(defaults.firstByte)
        case 4: options.timeouts.idle = limit(defaults.idle)
        case 5: options.timeouts.total = limit(defaults.total)
        // (For SEND, no limit is a limit too: nil would mean "as the idle limit".)
        case 6: options.timeouts.send = milliseconds == 0 ? Nanoseconds(.max) : limit(defaults.send)
        default: throw invalid("unknown timeout \(which)")
        }
    }

    static func redirects(_ options: inout TransferOptions, _ follow: Int32, _ maxRedirects: Int32) throws(CourierError) {
        // 2 is COURIER_FOLLOW_AUTO_REFERER: follow, each hop sending the URL it came from.
        guard follow >= 0 && follow <= 2 else { throw invalid("follow must be 0, 1 or COURIER_FOLLOW_AUTO_REFERER") }
        options.redirects.follow = follow != 0
        options.redirects.autoReferer = follow == 2
        if maxRedirects >= 0 { options.redirects.maxRedirects = Int(maxRedirects) }
    }

    static func decompress(_ options: inout TransferOptions, _ enabled: Int32) throws(CourierError) {
        guard enabled == 0 || enabled == 1 else { throw invalid("enabled must be 0 or 1") }
        options.decompress = enabled == 1
    }

    static func maxBody(_ options: inout TransferOptions, _ bytes: Int64) throws(CourierError) {
        guard bytes >= 0 else { throw invalid("negative body limit") }
        options.limits.maxBodyBytes = bytes == 0 ? nil : UInt64(bytes)
    }

    static func tlsCA(_ options: inout TransferOptions, _ file: UnsafePointer<CChar>?, _ directory: UnsafePointer<CChar>?) {
        options.tls.caFile = string(file)
        options.tls.caDirectory = string(directory)
    }

    static func tlsSystemRoots(_ options: inout TransferOptions, _ use: Int32) throws(CourierError) {
        switch use {
        case 0: options.tls.useSystemTrustStore = false
        case 1: options.tls.useSystemTrustStore = true
        default: throw invalid("use must be 0 or 1")
        }
    }

    static func tlsVerify(_ options: inout TransferOptions, _ verify: Int32) throws(CourierError) {
        switch verify {
        case 0: options.tls.verification = .insecureAcceptAnyCertificate
        case 1: options.tls.verification = .full
        default: throw invalid("verify must be 0 or 1")
        }
    }

    static func tlsClientCertificate(_ options: inout TransferOptions, _ certificate: UnsafePointer<CChar>?,
                                     _ key: UnsafePointer<CChar>?, _ passphrase: UnsafePointer<CChar>?) throws(CourierError) {
        guard let certificate = string(certificate) else { throw invalid("no certificate file") }
        options.tls.clientCertificateFile = certificate
        options.tls.clientKeyFile = string(key)
        options.tls.clientKeyPassphrase = string(passphrase)
    }

    static func tlsPins(_ options: inout TransferOptions, _ pins: UnsafePointer<CChar>?) throws(CourierError) {
        guard let pins = string(pins) else { throw invalid("no pins") }
        options.tls.pins = [try PinSet(pinnedPublicKey: pins)]
    }

    static func tlsVersions(_ options: inout TransferOptions, _ minimum: Int32, _ maximum: Int32) throws(CourierError) {
        func version(_ raw: Int32) throws(CourierError) -> TLSConfiguration.Version? {
            if raw == 0 { return nil }
            guard let v = TLSConfiguration.Version(rawValue: Int(raw)) else { throw invalid("unknown TLS version 0x\(String(raw, radix: 16))") }
            return v
        }
        let low = try version(minimum)
        let high = try version(maximum)
        if let low, let high, low > high { throw invalid("minimum TLS version above the maximum") }
        options.tls.minimumVersion = low ?? .tls12
        options.tls.maximumVersion = high
    }
}

// Settings curl's users reach for (curl's --ciphers, --tls13-ciphers, --curves, --no-alpn,
// --happy-eyeballs-timeout-ms, --expect100-timeout), and the response head's limits.
extension TransferSetting {
    static func tlsCiphers(_ options: inout TransferOptions, _ ciphers: UnsafePointer<CChar>?, _ tls13: UnsafePointer<CChar>?) {
        options.tls.cipherList = string(ciphers)
        options.tls.tls13CipherSuites = string(tls13)
    }

    static func tlsCurves(_ options: inout TransferOptions, _ curves: UnsafePointer<CChar>?) {
        options.tls.curves = string(curves)
    }

    static func tlsALPN(_ options: inout TransferOptions, _ enabled: Int32) throws(CourierError) {
        guard enabled == 0 || enabled == 1 else { throw invalid("enabled must be 0 or 1") }
        options.tls.offersALPN = enabled == 1
    }

    static func httpVersion(_ options: inout TransferOptions, _ version: Int32) throws(CourierError) {
        switch version {
        case 0, 2: options.httpVersion = .http2Preferred
        case 1: options.httpVersion = .http1Only
        case 3: options.httpVersion = .http2Only
        default: throw invalid("version must be a COURIER_HTTP_VERSION_* value")
        }
    }

    static func happyEyeballs(_ options: inout TransferOptions, _ milliseconds: Int64) throws(CourierError) {
        guard milliseconds >= 0 else { throw invalid("negative delay") }
        options.happyEyeballsDelay = .milliseconds(UInt64(milliseconds))
    }

    static func http2PingInterval(_ options: inout TransferOptions, _ milliseconds: Int64) throws(CourierError) {
        guard milliseconds >= 0 else { throw invalid("negative interval") }
        options.http2PingInterval = milliseconds == 0 ? nil : .milliseconds(UInt64(milliseconds))
    }

    static func continueTimeout(_ options: inout TransferOptions, _ milliseconds: Int64) throws(CourierError) {
        guard milliseconds >= 0 else { throw invalid("negative timeout") }
        options.continueTimeout = .milliseconds(UInt64(milliseconds))
    }

    static func headerLimits(_ options: inout TransferOptions, _ bytes: Int64, _ fields: Int32) throws(CourierError) {
        guard bytes >= 0, fields >= 0 else { throw invalid("negative limit") }
        let defaults = ResponseLimits()
        options.limits.maxHeaderBytes = bytes == 0 ? defaults.maxHeaderBytes : Int(clamping: bytes)
        options.limits.maxHeaderCount = fields == 0 ? defaults.maxHeaderCount : Int(fields)
    }
}
