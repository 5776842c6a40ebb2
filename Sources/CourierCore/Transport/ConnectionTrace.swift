/// What opening one connection did, as the lines people read (curl's `-v` "*" lines): the
/// addresses tried and the one that answered, the proxy's tunnel, each TLS handshake message in
/// either direction, what the handshake agreed on and the certificate chain it was shown, and,
/// when it failed, where it stopped and why.
///
/// Kept only when the request that opened the connection asks (`TransferOptions.tracesConnections`):
/// nothing is formatted for other connections. A transfer reads it while the connection serves it,
/// or from its error when opening failed (`Transfer.connectionTrace`). Written on the loop thread
/// only; an error carries it to the thread that reads the result, after the writing ended.
package final class ConnectionTrace: @unchecked Sendable {
    /// The connection's number (the loop's ids start at 1).
    package let connectionID: UInt64
    package private(set) var lines: [String] = []
    /// Where the "Connected to ..." line is, for front ends that append their connection number.
    package private(set) var connectedLine: Int?
    /// The last TLS handshake message seen ("Server hello (IN)"): where a failed handshake stopped.
    package var lastHandshakeMessage: String?

    package init(connectionID: UInt64) {
        self.connectionID = connectionID
    }

    package func add(_ line: String) {
        lines.append(line)
    }

    /// The line saying where the connection went (the address that answered).
    package func connected(_ line: String) {
        connectedLine = lines.count
        lines.append(line)
    }
}
