import Courier
import CourierCore
import Glibc

// courier_request_*.

@inline(__always)
func request(_ handle: OpaquePointer?) -> CRequest? {
    object(handle, tag: HandleTag.request, as: CRequest.self)
}

/// The request behind `handle` if it may still be configured; otherwise the code to return.
@inline(__always)
func configurable(_ handle: OpaquePointer?) -> Result<CRequest, CourierError> {
    guard let request = request(handle) else { return .failure(CourierError(.misuse, "not a request handle")) }
    guard !request.wasSent else {
        return .failure(CourierError(.misuse, "the request was already sent; settings are frozen"))
    }
    return .success(request)
}

/// Runs a setter on a configurable request: MISUSE for a bad or sent handle, and the setter's
/// own error (recorded for courier_request_errmsg) otherwise.
@inline(__always)
func configure(_ handle: OpaquePointer?, _ body: (CRequest) throws(CourierError) -> Void) -> Int32 {
    switch configurable(handle) {
    case .failure(let error):
        if let request = request(handle) { return request.record(error) }
        return error.code.c
    case .success(let request):
        do {
            try body(request)
            return COURIER_OK
        } catch {
            return request.record(error)
        }
    }
}

func invalid(_ what: String) -> CourierError { CourierError(.invalidArgument, what) }

@_cdecl("courier_request_create")
public func courier_request_create(_ engineHandle: OpaquePointer?, _ method: UnsafePointer<CChar>?,
                                   _ url: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return CourierError.Code.misuse.c }
    out.pointee = nil
    let engine: CEngine
    if let engineHandle {
        guard let live = CEngine.fromHandle(engineHandle) else { return CourierError.Code.misuse.c }
        engine = live
    } else {
        engine = CEngine.shared
    }
    do throws(CourierError) {
        // The draft goes straight into the request (a temporary: moved, never copied).
        out.pointee = retainedHandle(CRequest(engine: engine, draft: try newDraft(engine, method, url), acceptedStatus: engine.acceptedStatus))
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

/// What a request of `engine` for `method` and `url` starts as (courier_request_create and
/// courier_request_reset); throws when the method or URL is refused. (Typed throws rather than an
/// optional: the draft is moved out, not copied.)
@inline(__always)
private func newDraft(_ engine: CEngine, _ method: UnsafePointer<CChar>?, _ url: UnsafePointer<CChar>?) throws(CourierError) -> RequestDraft {
    if _slowPath(engine.invalidated.load(ordering: .relaxed)) { throw CourierError(.engineInvalidated, "the engine was invalidated") }
    guard let url = string(url) else { throw CourierError(.invalidURL) }
    let verb: HTTPMethod
    if let method, strcmp(method, "GET") != 0 {
        verb = HTTPMethod(rawValue: String(cString: method))
        guard verb.isValidToken else { throw CourierError(.invalidArgument, "the method is not a token") }
    } else {
        verb = .get  // the common case, without building and checking a String
    }
    if RequestDraft.isAbsoluteURL(url) {
        // Absolute: parsed now, so a bad URL fails here rather than at send time.
        let parsed = try CourierURL(parsing: url)
        let target = parsed.target
        return RequestDraft(method: verb, base: parsed, target: target, parameters: [:], engineID: engine.id,
                            options: engine.options, defaultHeaders: engine.defaultHeaders)
    }
    // A path under the engine's base: unsafe bytes are escaped when the URL is built, as for
    // Swift's Engine.operation(path:).
    guard engine.base != nil else { throw CourierError(.invalidURL, "a path needs an engine with a base URL") }
    let target = RequestDraft.target(url, under: engine.basePath)
    return RequestDraft(method: verb, base: engine.base, target: target, parameters: [:], engineID: engine.id,
                        options: engine.options, defaultHeaders: engine.defaultHeaders)
}

@_cdecl("courier_request_reset")
public func courier_request_reset(_ handle: OpaquePointer?, _ method: UnsafePointer<CChar>?, _ url: UnsafePointer<CChar>?) -> Int32 {
    guard let request = request(handle) else { return CourierError.Code.misuse.c }
    let draft: RequestDraft
    do throws(CourierError) {
        draft = try newDraft(request.engine, method, url)
    } catch {
        return request.record(error)
    }
    guard request.reset(draft: draft) else {
        return request.record(CourierError(.misuse, "the request is still in flight (or its outcome not yet delivered)"))
    }
    return COURIER_OK
}

@_cdecl("courier_request_free")
public func courier_request_free(_ handle: OpaquePointer?) {
    guard let request = request(handle), let handle else { return }
    request.tag = HandleTag.dead
    request.markFreed()
    releaseHandle(handle)
}

@_cdecl("courier_request_add_header")
public func courier_request_add_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let field = validatedHeader(name, value) else {
            throw CourierError(.invalidHeader, "NULL, CR, LF or a name that is not a token")
        }
        r.draft.headers.add(name: field.name, value: field.value)
    }
}

@_cdecl("courier_request_remove_header")
public func courier_request_remove_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let name = string(name), !name.isEmpty else { throw CourierError(.invalidHeader, "no header name") }
        r.draft.headers.remove(name: name)
        r.draft.suppressedHeaders.append(name)
    }
}

@_cdecl("courier_request_set_body")
public func courier_request_set_body(_ handle: OpaquePointer?, _ data: UnsafeRawPointer?, _ length: Int) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard length >= 0, data != nil || length == 0 else { throw invalid("NULL body with a non-zero length") }
        let bytes = data.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
        r.draft.body = .bytes(bytes)
    }
}

@_cdecl("courier_request_add_urlencoded_field")
public func courier_request_add_urlencoded_field(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let name = string(name), let value = string(value) else { throw invalid("NULL form field name or value") }
        var form = r.formFields ?? FormFields([])
        form.fields.append(FormFields.Field(name, value))
        r.formFields = form
        let made = form.serialize()
        r.draft.body = made.body
        if !r.draft.headers.contains("Content-Type"), let type = made.contentType { r.draft.headers.add(name: "Content-Type", value: type) }
    }
}

@_cdecl("courier_request_set_body_file")
public func courier_request_set_body_file(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let path = string(path), !path.isEmpty else { throw invalid("no file path") }
        r.draft.body = .file(path: path)
    }
}

@_cdecl("courier_request_add_param")
public func courier_request_add_param(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let name = string(name), let value = string(value) else { throw invalid("NULL parameter name or value") }
        r.draft.parameters[name] = value
    }
}

@_cdecl("courier_request_set_param_encoding")
public func courier_request_set_param_encoding(_ handle: OpaquePointer?, _ encoding: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in
        switch encoding {
        case 0: r.draft.parameterEncoding = .form
        case 1: r.draft.parameterEncoding = .json
        default: throw invalid("unknown parameter encoding \(encoding)")
        }
    }
}

@_cdecl("courier_request_set_priority")
public func courier_request_set_priority(_ handle: OpaquePointer?, _ priority: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let level = Priority(rawValue: Int(priority)) else { throw invalid("unknown priority \(priority)") }
        r.draft.options.priority = level
    }
}

@_cdecl("courier_request_set_timeout")
public func courier_request_set_timeout(_ handle: OpaquePointer?, _ which: Int32, _ milliseconds: Int64) -> Int32 {
    configure(handle) { r throws(CourierError) in
        // COURIER_TIMEOUT_DEFAULT: what a new request of the engine has.
        try TransferSetting.timeout(&r.draft.options, which, milliseconds, defaults: r.engine.options.timeouts)
    }
}

@_cdecl("courier_request_set_redirects")
public func courier_request_set_redirects(_ handle: OpaquePointer?, _ follow: Int32, _ maxRedirects: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.redirects(&r.draft.options, follow, maxRedirects) }
}

@_cdecl("courier_request_set_decompress")
public func courier_request_set_decompress(_ handle: OpaquePointer?, _ enabled: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.decompress(&r.draft.options, enabled) }
}

@_cdecl("courier_request_set_max_body")
public func courier_request_set_max_body(_ handle: OpaquePointer?, _ bytes: Int64) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.maxBody(&r.draft.options, bytes) }
}

@_cdecl("courier_request_set_output_file")
public func courier_request_set_output_file(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let path = string(path), !path.isEmpty else { throw invalid("no file path") }
        r.draft.downloadPath = path
    }
}

@_cdecl("courier_request_set_tls_ca")
public func courier_request_set_tls_ca(_ handle: OpaquePointer?, _ file: UnsafePointer<CChar>?, _ directory: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in TransferSetting.tlsCA(&r.draft.options, file, directory) }
}

@_cdecl("courier_request_set_tls_system_roots")
public func courier_request_set_tls_system_roots(_ handle: OpaquePointer?, _ use: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.tlsSystemRoots(&r.draft.options, use) }
}

@_cdecl("courier_request_set_tls_verify")
public func courier_request_set_tls_verify(_ handle: OpaquePointer?, _ verify: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.tlsVerify(&r.draft.options, verify) }
}

@_cdecl("courier_request_set_tls_client_certificate")
public func courier_request_set_tls_client_certificate(_ handle: OpaquePointer?, _ certificate: UnsafePointer<CChar>?,
                                                       _ key: UnsafePointer<CChar>?, _ passphrase: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        try TransferSetting.tlsClientCertificate(&r.draft.options, certificate, key, passphrase)
    }
}

@_cdecl("courier_request_set_tls_pins")
public func courier_request_set_tls_pins(_ handle: OpaquePointer?, _ pins: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.tlsPins(&r.draft.options, pins) }
}

@_cdecl("courier_request_set_tls_versions")
public func courier_request_set_tls_versions(_ handle: OpaquePointer?, _ minimum: Int32, _ maximum: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.tlsVersions(&r.draft.options, minimum, maximum) }
}

@_cdecl("courier_request_set_progress")
public func courier_request_set_progress(_ handle: OpaquePointer?, _ progress: courier_progress_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        r.progress = progress.map { ($0, user) }
    }
}

@_cdecl("courier_request_set_cache_policy")
public func courier_request_set_cache_policy(_ handle: OpaquePointer?, _ policy: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard policy >= 0, Int(policy) < CacheCodes.policies.count else { throw invalid("cache policy \(policy)") }
        r.draft.options.cachePolicy = CacheCodes.policies[Int(policy)]
    }
}

@_cdecl("courier_request_set_coalescing")
public func courier_request_set_coalescing(_ handle: OpaquePointer?, _ mode: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard mode >= 0, Int(mode) < CacheCodes.coalescing.count else { throw invalid("coalescing mode \(mode)") }
        r.draft.options.coalescing = CacheCodes.coalescing[Int(mode)]
    }
}

@_cdecl("courier_request_send")
public func courier_request_send(_ handle: OpaquePointer?, _ done: courier_done_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let request = request(handle) else { return CourierError.Code.misuse.c }
    guard let done else { return request.record(CourierError(.misuse, "no completion callback")) }
    return request.send(.callback(done, user))
}

@_cdecl("courier_request_enqueue")
public func courier_request_enqueue(_ handle: OpaquePointer?) -> Int32 {
    guard let request = request(handle) else { return CourierError.Code.misuse.c }
    guard !request.engine.isDestroyed, request.engine !== CEngine.shared else {
        return request.record(CourierError(.misuse, "the request's engine has no completion queue (destroyed, or none given)"))
    }
    return request.send(.completionQueue)
}

@_cdecl("courier_request_perform")
public func courier_request_perform(_ handle: OpaquePointer?, _ response: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    response?.pointee = nil
    guard let request = request(handle) else { return CourierError.Code.misuse.c }
    if Runtime.shared.isOnLoopThread {
        return request.record(CourierError(.misuse, "courier_request_perform called from a callback would wait for itself"))
    }
    let (handle, code) = request.perform()
    if let response {
        response.pointee = handle
    } else if let handle {
        releaseHandle(handle)
    }
    return code
}

@_cdecl("courier_request_cancel")
public func courier_request_cancel(_ handle: OpaquePointer?) -> Int32 {
    guard let request = request(handle) else { return CourierError.Code.misuse.c }
    request.cancel()
    return COURIER_OK
}

@_cdecl("courier_request_errmsg")
public func courier_request_errmsg(_ handle: OpaquePointer?) -> UnsafePointer<CChar> {
    guard let request = request(handle) else { return courierStaticString(CourierError.Code.misuse.c) }
    return request.errorText
}

@_cdecl("courier_request_set_basic_auth")
public func courier_request_set_basic_auth(_ handle: OpaquePointer?, _ user: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let user = string(user) else { throw invalid("NULL user") }
        let authorization = Authorization.basic(user: user, password: string(password) ?? "")
        if let problem = authorization.problem { throw invalid(problem) }
        r.draft.authorization = authorization
    }
}

@_cdecl("courier_request_set_bearer")
public func courier_request_set_bearer(_ handle: OpaquePointer?, _ token: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let token = string(token) else {
            r.draft.authorization = nil
            return
        }
        let authorization = Authorization.bearer(token)
        if let problem = authorization.problem { throw invalid(problem) }
        r.draft.authorization = authorization
    }
}

@_cdecl("courier_request_set_user_data")
public func courier_request_set_user_data(_ handle: OpaquePointer?, _ data: UnsafeMutableRawPointer?) -> Int32 {
    // Allowed after send too (a callback may re-point it): a pointer-sized store.
    guard let request = request(handle) else { return CourierError.Code.misuse.c }
    request.userData = data
    return COURIER_OK
}

@_cdecl("courier_request_user_data")
public func courier_request_user_data(_ handle: OpaquePointer?) -> UnsafeMutableRawPointer? {
    request(handle)?.userData
}

@_cdecl("courier_request_curl_command")
public func courier_request_curl_command(_ handle: OpaquePointer?, _ out: UnsafeMutablePointer<CChar>?, _ capacity: Int,
                                         _ needed: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let request = request(handle), let needed, capacity == 0 || out != nil else { return CourierError.Code.misuse.c }
    writeText(request.draft.curlCommand, out, capacity, needed)
    return COURIER_OK
}

@_cdecl("courier_request_set_time_condition")
public func courier_request_set_time_condition(_ handle: OpaquePointer?, _ condition: Int32, _ time: Int64) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard condition == 0 || TimeCondition.representable.contains(time) else {
            throw CourierError(.invalidArgument, "time \(time) is outside the years 0000 to 9999")
        }
        switch condition {
        case 0: r.draft.setTimeCondition(nil)
        case 1: r.draft.setTimeCondition(.modifiedSince(time))
        case 2: r.draft.setTimeCondition(.unmodifiedSince(time))
        case 3: r.draft.setTimeCondition(.lastModified(time))
        default: throw CourierError(.invalidArgument, "time condition \(condition): COURIER_TIMECOND_*")
        }
    }
}
