import Foundation
@testable import CourierCore

/// What the two outbox suites share: the Idempotency-Key server's record, and scratch directories.
enum OutboxTestSupport {
    /// One key's record at Tests/Servers/idempotency_server.py.
    struct Seen: Decodable { var count: Int; var body: String; var method: String }

    /// Every key the server at `server` saw.
    static func keys(_ server: String) async throws -> [String: Seen] {
        let (t, _) = await fetch(server + "/keys")
        return try JSONDecoder().decode([String: Seen].self, from: Data(t.responseBody))
    }

    /// A directory path of its own under the temporary directory (not created).
    static func scratchPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-outbox-\(UUID().uuidString)").path
    }
}
