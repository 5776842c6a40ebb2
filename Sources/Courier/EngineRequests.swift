import CourierCore

/// One call per request for the common case: the operation is made, sent and awaited, and its
/// `Response` returned (URLSession's `data(from:)`, AsyncHTTPClient's `execute`). An unaccepted
/// status throws `.httpStatus` with the response in `CourierError.response`; build an
/// `HTTPOperation` instead when the request needs handlers, progress, a download file or a cache
/// policy of its own.
extension Engine {
    /// Sends `method` to `path` under the engine's base URL and returns the response.
    /// `params` go to the query string (to the body for POST, PUT and PATCH without a `body`);
    /// `headers` are added to the engine's defaults.
    public func request(_ method: HTTPMethod, path: String, params: [String: String] = [:], body: RequestBody? = nil,
                        contentType: String? = nil, headers: [String: String] = [:]) async throws(CourierError) -> Response {
        let operation = operation(path: path, params: params, method: method)
        if let body { operation.body = body }
        if let contentType { operation.headers.replaceOrAdd(name: "Content-Type", value: contentType) }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { operation.headers.replaceOrAdd(name: name, value: value) }
        return try await send(operation)
    }

    /// GET `path`.
    public func get(path: String, params: [String: String] = [:], headers: [String: String] = [:]) async throws(CourierError) -> Response {
        try await request(.get, path: path, params: params, headers: headers)
    }

    /// HEAD `path`.
    public func head(path: String, params: [String: String] = [:], headers: [String: String] = [:]) async throws(CourierError) -> Response {
        try await request(.head, path: path, params: params, headers: headers)
    }

    /// DELETE `path`.
    public func delete(path: String, params: [String: String] = [:], headers: [String: String] = [:]) async throws(CourierError) -> Response {
        try await request(.delete, path: path, params: params, headers: headers)
    }

    /// POST `body` to `path` (`.bytes`, `.file`, `.multipart`, `.stream`), labelled `contentType`.
    public func post(path: String, body: RequestBody = .empty, contentType: String? = nil,
                     headers: [String: String] = [:]) async throws(CourierError) -> Response {
        try await request(.post, path: path, body: body, contentType: contentType, headers: headers)
    }

    /// PUT `body` to `path`.
    public func put(path: String, body: RequestBody = .empty, contentType: String? = nil,
                    headers: [String: String] = [:]) async throws(CourierError) -> Response {
        try await request(.put, path: path, body: body, contentType: contentType, headers: headers)
    }

    /// PATCH `path` with `body`.
    public func patch(path: String, body: RequestBody = .empty, contentType: String? = nil,
                      headers: [String: String] = [:]) async throws(CourierError) -> Response {
        try await request(.patch, path: path, body: body, contentType: contentType, headers: headers)
    }
}
