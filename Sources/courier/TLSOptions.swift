import Courier
import CourierCore

/// The TLS part of the command line, as curl spells it.
enum TLSOptions {
    static func configuration(_ options: CommandLineOptions) -> Result<TLSConfiguration, CourierError> {
        var tls = TLSConfiguration()
        tls.caFile = options.caFile
        tls.caDirectory = options.caPath
        if options.insecure { tls.verification = .insecureAcceptAnyCertificate }
        if options.noSessionID { tls.sessionResumption = false }
        tls.clientCertificateFile = options.certificate
        tls.clientKeyFile = options.key
        tls.clientKeyPassphrase = options.passphrase
        if let minimum = options.tlsMinimum { tls.minimumVersion = minimum }
        tls.maximumVersion = options.tlsMaximum
        tls.cipherList = options.ciphers
        tls.tls13CipherSuites = options.tls13Ciphers
        tls.curves = options.curves
        tls.offersALPN = !options.noALPN
        if let pinned = options.pinnedPublicKey {
            do {
                tls.pins = [try PinSet(pinnedPublicKey: pinned)]
            } catch {
                return .failure(error)
            }
        }
        return .success(tls)
    }
}
