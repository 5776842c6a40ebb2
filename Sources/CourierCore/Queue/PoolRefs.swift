/// Identity wrapper so transfers can live in the pure state machines' hashable collections.
package struct TransferRef: Hashable {
    package let transfer: Transfer
    package init(_ transfer: Transfer) { self.transfer = transfer }
    package static func == (a: TransferRef, b: TransferRef) -> Bool { a.transfer === b.transfer }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(transfer)) }
}

/// Identity wrapper for connections in the pool state.
package struct ConnectionRef: Hashable {
    package let connection: HTTP1Connection
    package init(_ connection: HTTP1Connection) { self.connection = connection }
    package static func == (a: ConnectionRef, b: ConnectionRef) -> Bool { a.connection === b.connection }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(connection)) }
}

/// Identity wrapper for HTTP/2 connections in the pool state.
package struct HTTP2Ref: Hashable {
    package let connection: HTTP2Connection
    package init(_ connection: HTTP2Connection) { self.connection = connection }
    package static func == (a: HTTP2Ref, b: HTTP2Ref) -> Bool { a.connection === b.connection }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(connection)) }
}
