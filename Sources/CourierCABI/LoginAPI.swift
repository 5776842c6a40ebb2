import Courier
import CourierCore

// Logins from C: Digest authentication (curl's CURLAUTH_DIGEST, a login the core answers 401s
// with) and .netrc files (curl's CURLOPT_NETRC_FILE).

/// The login `user` and `password` name (NULL user: none, the password then ignored).
private func digestLogin(_ user: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?) throws(CourierError) -> DigestLogin? {
    guard let user = string(user) else { return nil }
    let login = DigestLogin(user: user, password: string(password) ?? "")
    if let problem = login.problem { throw invalid(problem) }
    return login
}

@_cdecl("courier_engine_set_digest_auth")
public func courier_engine_set_digest_auth(_ handle: OpaquePointer?, _ user: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in o.digest = try digestLogin(user, password) }
}

@_cdecl("courier_request_set_netrc")
public func courier_request_set_netrc(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard r.draft.authorization == nil, r.draft.credentials == nil,
              let netrc = try Netrc.load(string(path)) else { return }
        let url = try r.draft.resolvedTarget().authority
        guard let (login, password) = netrc.credentials(forHost: url.host, user: url.user) else { return }
        let authorization = Authorization.basic(user: login, password: password)
        if let problem = authorization.problem { throw invalid("the .netrc entry for \(url.host): \(problem)") }
        r.draft.authorization = authorization
    }
}

@_cdecl("courier_request_set_digest_auth")
public func courier_request_set_digest_auth(_ handle: OpaquePointer?, _ user: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in r.draft.options.digest = try digestLogin(user, password) }
}
