@testable import CourierCore

/// A stored response built the way the cache builds one, for the rule tests.
func storedResponse(_ fields: [(String, String)] = [], status: Int = 200, body: String = "body",
                    requestTime: Int64 = 1_000_000, responseTime: Int64 = 1_000_000, key: String = "http://a.example/x",
                    varyNames: [String] = [], variantKey: String = "", bodyDecoded: Bool = false) -> StoredResponse {
    StoredResponse(key: key, varyNames: varyNames, variantKey: variantKey, status: status, version: 1, reason: "OK",
                   headers: HTTPHeaders(fields), body: Array(body.utf8), requestTime: requestTime, responseTime: responseTime,
                   bodyDecoded: bodyDecoded)
}

/// A request as the cache sees it.
func cacheRequest(_ fields: [(String, String)] = [], method: HTTPMethod = .get) -> CacheRequest {
    CacheRequest(method: method, headers: HTTPHeaders(fields))
}

/// An IMF-fixdate `offset` seconds from `base`.
func httpDate(_ base: Int64 = 1_000_000, _ offset: Int64 = 0) -> String { HTTPDate.format(base + offset) }
