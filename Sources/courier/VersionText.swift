import Courier
import CourierCore

/// `-V`: curl's three lines, honestly: the libraries in use, the protocols, and the features
/// under curl's own names (only those Courier has), then Courier's own.
enum VersionText {
    /// curl's feature names for what this build does.
    static let features = ["AsynchDNS", "brotli", "IPv6", "Largefile", "libz", "SSL", "threadsafe", "zstd"]

    static var text: String {
        let libraries = (["libcourier/\(CourierVersion.string)"] + LibraryVersions.all).joined(separator: " ")
        return """
        courier \(CourierVersion.string) (\(LibraryVersions.host)) \(libraries)
        Protocols: http https
        Features: \(features.joined(separator: " "))
        Courier: shared-queue keep-alive-pool http-cache outbox resume retry pinning cookies proxy

        """
    }
}
