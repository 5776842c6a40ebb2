import CourierCore
import Synchronization

/// Why an engine stopped taking requests: AFURLSessionManager's session-did-become-invalid, told
/// once to `Engine.Configuration.onInvalidated`.
///
/// (Its "did finish events for background session" has no Linux meaning: there is no system
/// daemon that finishes transfers for a suspended process, so nothing is ever reported for it.)
public enum EngineInvalidation: Sendable, Equatable {
    /// `Engine.invalidate` was called: the operations in flight were cancelled
    /// (`cancelledRunning`, AFNetworking's invalidateAndCancel) or left to finish
    /// (finishTasksAndInvalidate).
    case invalidated(cancelledRunning: Bool)
    /// The engine's TLS configuration cannot be used (a CA file, a client certificate or key, a
    /// cipher list that does not load), found when the engine was made: every operation of it
    /// fails with this error instead of at its first connection.
    case tlsConfigurationRejected(CourierError)

    /// The error operations made afterwards fail with.
    var error: CourierError {
        switch self {
        case .invalidated: return CourierError(.engineInvalidated, "the engine was invalidated")
        case .tlsConfigurationRejected(let error): return error
        }
    }
}

/// An engine's invalidation: set once, read by every operation the engine makes (one relaxed
/// load), told to the observer once on the engine's callback queue.
final class InvalidationState: Sendable {
    private let reason = Mutex<EngineInvalidation?>(nil)
    private let flag = Atomic<Bool>(false)

    /// Whether the engine was invalidated (one relaxed load: every operation asks).
    @inline(__always)
    var isSet: Bool { flag.load(ordering: .relaxed) }

    /// The reason operations fail with, nil while the engine is valid.
    var current: EngineInvalidation? {
        guard flag.load(ordering: .acquiring) else { return nil }
        return reason.withLock { $0 }
    }

    /// Records `invalidation` unless the engine was invalidated already; true when this call did.
    func invalidate(_ invalidation: EngineInvalidation) -> Bool {
        let first = reason.withLock { current -> Bool in
            guard current == nil else { return false }
            current = invalidation
            return true
        }
        if first { flag.store(true, ordering: .releasing) }
        return first
    }

    /// Why `tls` cannot be used, checked without the system's roots (their loading is what
    /// connections share; a CA file, a client certificate and key, the cipher lists are what a
    /// caller can get wrong). nil for the default configuration, which always loads.
    static func tlsProblem(_ tls: TLSConfiguration) -> CourierError? {
        guard tls != TLSConfiguration() else { return nil }
        var probe = tls
        probe.useSystemTrustStore = false
        if case .failure(let error) = TLSContext.make(probe) { return error }
        return nil
    }
}
