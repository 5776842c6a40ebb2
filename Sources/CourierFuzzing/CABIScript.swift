import CourierHeader

/// Fuzz target: the C ABI driven by a byte script, as a careless C caller would drive it.
///
/// Each input byte picks a call (engine and request constructors, every setter, header and
/// parameter functions, destructors, error text), the following bytes its arguments: strings of
/// fuzzed bytes (CR, LF and NUL included), integers at any value, NULL handles, and handles used
/// straight after being destroyed. Nothing is sent (no I/O). Checked: every call returns a code
/// the header defines; a NULL or destroyed handle gives COURIER_E_MISUSE; a header with CR, LF or a
/// non-token name is refused; `courier_strerror` has text for any code; nothing traps or leaks a
/// handle (whatever the script leaves is destroyed at its end).
package enum CABIScript {
    package static func run(_ input: UnsafeRawBufferPointer) {
        var script = Script(input)
        var engines: [OpaquePointer?] = [nil, nil]
        var requests: [OpaquePointer?] = [nil, nil, nil]
        defer {
            for request in requests { courier_request_free(request) }
            for engine in engines { courier_engine_destroy(engine) }
        }
        var steps = 0
        while let op = script.byte(), steps < 64 {
            steps += 1
            let engineSlot = Int(script.byte() ?? 0) % (engines.count + 1)  // the last index means NULL
            let requestSlot = Int(script.byte() ?? 0) % (requests.count + 1)
            let engine = engineSlot < engines.count ? engines[engineSlot] : nil
            let request = requestSlot < requests.count ? requests[requestSlot] : nil
            switch op % 26 {
            case 0:
                var made: OpaquePointer?
                let base = script.string()
                let rc = withOptionalCString(base) { courier_engine_create($0, &made) }
                check(rc, allowed: [COURIER_OK, COURIER_E_INVALID_URL, COURIER_E_UNSUPPORTED_SCHEME], "engine_create")
                precondition((rc == COURIER_OK) == (made != nil), "engine_create: a handle without OK or OK without one")
                keep(made, in: &engines, at: engineSlot, destroy: courier_engine_destroy)
            case 1:
                var made: OpaquePointer?
                let method = script.string(), url = script.string()
                let rc = withOptionalCString(method) { m in withOptionalCString(url) { u in courier_request_create(engine, m, u, &made) } }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_URL, COURIER_E_UNSUPPORTED_SCHEME,
                                    COURIER_E_INVALID_ARGUMENT], "request_create")
                keep(made, in: &requests, at: requestSlot, destroy: courier_request_free)
            case 2:
                let name = script.string(), value = script.string()
                let rc = withOptionalCString(name) { n in withOptionalCString(value) { v in courier_request_add_header(request, n, v) } }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_HEADER, COURIER_E_INVALID_ARGUMENT], "add_header")
                if rc == COURIER_OK { precondition(isSendable(name, value), "a header with CR, LF or a bad name was taken") }
                if request == nil { precondition(rc == COURIER_E_MISUSE, "add_header on NULL") }
            case 3:
                let rc = withOptionalCString(script.string()) { courier_request_remove_header(request, $0) }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_NOT_FOUND, COURIER_E_INVALID_HEADER, COURIER_E_INVALID_ARGUMENT], "remove_header")
            case 4:
                let rc = courier_request_set_timeout(request, Int32(script.int()), script.int64())
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_timeout")
            case 5:
                check(courier_request_set_priority(request, Int32(script.int())), allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_priority")
            case 6:
                check(courier_request_set_cache_policy(request, Int32(script.int())), allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_cache_policy")
                check(courier_request_set_coalescing(request, Int32(script.int())), allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_coalescing")
            case 7:
                check(courier_request_set_redirects(request, Int32(script.int()), Int32(script.int())),
                      allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_redirects")
                check(courier_request_set_decompress(request, Int32(script.int())), allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_decompress")
                check(courier_request_set_max_body(request, script.int64()), allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_max_body")
            case 8:
                let body = script.bytes()
                let rc = body.withUnsafeBytes { courier_request_set_body(request, script.flag() ? nil : $0.baseAddress, $0.count) }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_body")
            case 9:
                let name = script.string(), value = script.string()
                let rc = withOptionalCString(name) { n in withOptionalCString(value) { v in courier_request_add_param(request, n, v) } }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "add_param")
            case 10:
                check(courier_request_set_param_encoding(request, Int32(script.int())), allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_param_encoding")
            case 11:
                let name = script.string(), value = script.string()
                let rc = withOptionalCString(name) { n in withOptionalCString(value) { v in courier_engine_add_header(engine, n, v) } }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_HEADER, COURIER_E_INVALID_ARGUMENT], "engine_add_header")
                if rc == COURIER_OK { precondition(isSendable(name, value), "an engine header with CR, LF or a bad name was taken") }
            case 12:
                check(courier_engine_set_accepted_status(engine, Int32(script.int()), Int32(script.int())),
                      allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_accepted_status")
            case 13:
                // Destroyed, then used at once: the header promises COURIER_E_MISUSE.
                guard requestSlot < requests.count, let doomed = requests[requestSlot] else { break }
                requests[requestSlot] = nil
                courier_request_free(doomed)
                precondition(courier_request_add_header(doomed, "A", "b") == COURIER_E_MISUSE, "a freed request was used")
                precondition(courier_request_set_priority(doomed, 0) == COURIER_E_MISUSE, "a freed request was used")
                courier_request_free(doomed)  // a second free is caught too
            case 14:
                guard engineSlot < engines.count, let doomed = engines[engineSlot] else { break }
                engines[engineSlot] = nil
                courier_engine_destroy(doomed)
                precondition(courier_engine_add_header(doomed, "A", "b") == COURIER_E_MISUSE, "a destroyed engine was used")
                var made: OpaquePointer?
                precondition(courier_request_create(doomed, "GET", "/", &made) == COURIER_E_MISUSE && made == nil,
                             "a request made on a destroyed engine")
                courier_engine_destroy(doomed)
            case 15:
                let code = Int32(truncatingIfNeeded: script.int64())
                guard let text = courier_strerror(code) else { preconditionFailure("courier_strerror(\(code)) is NULL") }
                precondition(text.pointee != 0, "courier_strerror(\(code)) is empty")
                _ = courier_request_errmsg(request)
            case 16:
                // The response accessors promise to cope with NULL.
                precondition(courier_response_status(nil) == 0, "the status of NULL is 0")
                var length = 99
                _ = courier_response_body(nil, &length)
                courier_response_free(nil)
            case 18:
                // Forms: NULL names, values, data and paths where the header promises an error.
                let name = script.string(), value = script.string()
                let rc = withOptionalCString(name) { n in withOptionalCString(value) { v in courier_request_add_form_field(request, n, v) } }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "add_form_field")
                if request != nil, rc == COURIER_OK { precondition(name != nil && value != nil, "a NULL form field was taken") }
                let data = script.bytes()
                let dataRC = withOptionalCString(name) { n in
                    data.withUnsafeBytes { courier_request_add_form_data(request, n, script.flag() ? nil : $0.baseAddress, $0.count, nil, nil) }
                }
                check(dataRC, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "add_form_data")
                let fileRC = withOptionalCString(name) { n in withOptionalCString(script.string()) { p in courier_request_add_form_file(request, n, p, nil, nil) } }
                check(fileRC, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "add_form_file")
            case 19:
                // Streaming settings with out-of-range values and NULL callbacks.
                check(courier_request_add_write_callback(request, nil, nil), allowed: [COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "add_write_callback NULL")
                check(courier_request_set_body_callback(request, nil, script.int64(), nil), allowed: [COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_body_callback NULL")
                check(courier_request_set_destination(request, nil, nil), allowed: [COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_destination NULL")
                check(courier_request_set_head_callback(request, nil, nil), allowed: [COURIER_OK, COURIER_E_MISUSE], "set_head_callback NULL")
                check(courier_request_set_expect_continue(request, Int32(script.int())), allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_expect_continue")
                check(courier_request_set_rate_limit(request, script.int64(), script.int64()), allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_rate_limit")
                // A body reader at any size (a second one is refused), and reads of a request never
                // sent: NULL buffers and counts, zero capacities, any timeout; never a wait.
                check(courier_request_set_body_reader(request, Int(truncatingIfNeeded: script.int64()), nil, nil),
                      allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_body_reader")
                var buffer = [UInt8](repeating: 0, count: 16)
                var received = 99
                let nullBuffer = script.flag(), nullCount = script.flag()
                let readRC = buffer.withUnsafeMutableBytes { bytes in
                    withUnsafeMutablePointer(to: &received) { count in
                        courier_request_read(request, nullBuffer ? nil : bytes.baseAddress, Int(script.byte() ?? 0) % 17,
                                             nullCount ? nil : count, Int32(truncatingIfNeeded: script.int()))
                    }
                }
                check(readRC, allowed: [COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "read unsent")
                precondition(nullCount || received == 0, "a failed read reported \(received) bytes")
            case 20:
                let rc = withOptionalCString(script.string()) { courier_request_set_resume_file(request, $0, Int32(script.int())) }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_resume_file")
                check(courier_request_resume(request), allowed: [COURIER_OK, COURIER_E_MISUSE], "resume")
                if request == nil { precondition(courier_request_resume(nil) == COURIER_E_MISUSE, "resume on NULL") }
            case 21:
                // Retries: counts, intervals (NULL with a count), flags and limits at any value.
                let count = Int32(truncatingIfNeeded: script.int())
                let intervals = (0..<Int(script.byte() ?? 0) % 4).map { _ in script.int64() }
                let nullIntervals = script.flag()
                let flags = UInt32(truncatingIfNeeded: script.int())
                let rc = intervals.withUnsafeBufferPointer { courier_request_set_retry(request, count, nullIntervals ? nil : $0.baseAddress, $0.count, flags) }
                check(rc, allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_retry")
                if rc == COURIER_OK { precondition(count >= 0 && flags & ~31 == 0 && intervals.allSatisfy { $0 >= 0 }, "a bad retry setting was taken") }
                check(courier_request_set_retry_limits(request, script.int64(), script.int64(), script.int64()),
                      allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_retry_limits")
                let statuses = (0..<Int(script.byte() ?? 0) % 4).map { _ in Int32(truncatingIfNeeded: script.int()) }
                check(statuses.withUnsafeBufferPointer { courier_request_set_retry_statuses(request, $0.baseAddress, $0.count) },
                      allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_retry_statuses")
                check(courier_request_set_retry_callback(request, nil, nil), allowed: [COURIER_OK, COURIER_E_MISUSE], "set_retry_callback")
                precondition(courier_response_retries(nil) == -COURIER_E_MISUSE, "retries of NULL")
            case 22:
                // Groups: made, given requests (or NULL, or the group itself), freed unsent.
                var group: OpaquePointer?
                let rc = courier_group_create(Int32(truncatingIfNeeded: script.int()), &group)
                check(rc, allowed: [COURIER_OK, COURIER_E_INVALID_ARGUMENT], "group_create")
                precondition((rc == COURIER_OK) == (group != nil), "group_create: a handle without OK or OK without one")
                check(courier_group_add(group, request), allowed: [COURIER_OK, COURIER_E_MISUSE], "group_add")
                check(courier_group_add(group, group), allowed: [COURIER_E_MISUSE], "group_add of a group")
                var response: OpaquePointer?
                check(courier_group_result(group, Int(script.byte() ?? 0), &response), allowed: [COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "group_result unsent")
                precondition(response == nil, "a result of a group never sent")
                check(courier_group_cancel(group), allowed: [COURIER_OK, COURIER_E_MISUSE], "group_cancel")
                courier_group_free(group)
                precondition(courier_group_add(nil, request) == COURIER_E_MISUSE, "group_add on NULL")
            case 23:
                // Cookie jars: files at fuzzed paths under a directory that does not exist (a fuzzed
                // path could name a device that never ends), set on requests or not.
                var jar: OpaquePointer?
                check(courier_cookiejar_create(&jar), allowed: [COURIER_OK], "cookiejar_create")
                let path = script.string().map { Array("/nonexistent-courier-fuzz/".utf8) + $0 }
                check(withOptionalCString(path) { courier_cookiejar_load(jar, $0) },
                      allowed: [COURIER_OK, COURIER_E_INVALID_ARGUMENT, COURIER_E_FILE], "cookiejar_load")
                check(courier_request_set_cookiejar(request, script.flag() ? jar : nil), allowed: [COURIER_OK, COURIER_E_MISUSE], "set_cookiejar")
                check(courier_request_set_cookiejar(request, request), allowed: [COURIER_E_MISUSE], "set_cookiejar with a request")
                _ = courier_cookiejar_count(jar)
                courier_cookiejar_free(jar)
                precondition(courier_cookiejar_load(nil, nil) == COURIER_E_MISUSE, "cookiejar_load on NULL")
            case 24:
                // Proxies, forms, authenticators and hooks: fuzzed strings, NULLs, nothing sent.
                let proxy = script.string(), noProxy = script.string()
                let proxyCodes = [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT, COURIER_E_PROXY | (4 << 8)]
                check(withOptionalCString(proxy) { p in withOptionalCString(noProxy) { courier_engine_set_proxy(engine, p, $0) } },
                      allowed: proxyCodes, "engine_set_proxy")
                check(withOptionalCString(proxy) { p in withOptionalCString(noProxy) { courier_request_set_proxy(request, p, $0) } },
                      allowed: proxyCodes, "request_set_proxy")
                let name = script.string(), value = script.string()
                check(withOptionalCString(name) { n in withOptionalCString(value) { courier_request_add_urlencoded_field(request, n, $0) } },
                      allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "add_urlencoded_field")
                let initial = script.string()
                check(withOptionalCString(initial) { courier_engine_set_authenticator(engine, $0, script.flag() ? declineChallenge : nil, nil) },
                      allowed: [COURIER_OK, COURIER_E_MISUSE, COURIER_E_INVALID_ARGUMENT], "set_authenticator")
                check(courier_engine_set_hooks(engine, nil, nil, nil, nil, nil), allowed: [COURIER_OK, COURIER_E_MISUSE], "set_hooks")
                precondition(courier_outgoing_url(nil) == nil && courier_outgoing_method(nil) == nil, "outgoing strings of NULL")
                precondition(courier_outgoing_set_header(nil, "a", "b") == COURIER_E_MISUSE, "outgoing_set_header on NULL")
                if engine == nil { precondition(courier_engine_set_proxy(nil, nil, nil) == COURIER_E_MISUSE, "set_proxy on NULL") }
            case 25:
                // Chains: made, given requests (or NULL, or the chain itself), freed unsent.
                var chain: OpaquePointer?
                check(courier_chain_create(&chain), allowed: [COURIER_OK], "chain_create")
                check(courier_chain_add(chain, request), allowed: [COURIER_OK, COURIER_E_MISUSE], "chain_add")
                check(courier_chain_add(chain, chain), allowed: [COURIER_E_MISUSE], "chain_add of a chain")
                check(courier_chain_set_next(chain, nil, nil), allowed: [COURIER_OK], "chain_set_next")
                var response: OpaquePointer?
                check(courier_chain_result(chain, Int(script.byte() ?? 0), &response), allowed: [COURIER_E_INVALID_ARGUMENT], "chain_result unsent")
                precondition(response == nil && courier_chain_ran(chain) == 0, "a result of a chain never sent")
                check(courier_chain_cancel(chain), allowed: [COURIER_OK], "chain_cancel")
                courier_chain_free(chain)
                precondition(courier_chain_add(nil, request) == COURIER_E_MISUSE, "chain_add on NULL")
            default:
                check(courier_request_cancel(request), allowed: [COURIER_OK, COURIER_E_MISUSE], "cancel")
            }
        }
    }

    /// A challenge callback that never supplies credentials (nothing is sent, so it never runs).
    private static let declineChallenge: courier_challenge_fn = { _, _, _, _, _, _, _ in 0 }

    /// Puts a new handle in its slot, destroying the one it replaces; a handle made for the NULL
    /// slot is destroyed at once.
    private static func keep(_ made: OpaquePointer?, in slots: inout [OpaquePointer?], at slot: Int,
                             destroy: (OpaquePointer?) -> Void) {
        if slot < slots.count {
            destroy(slots[slot])
            slots[slot] = made
        } else {
            destroy(made)
        }
    }

    private static let definedCodes: ClosedRange<Int32> = 0...32

    private static func check(_ rc: Int32, allowed: [Int32], _ call: String) {
        precondition(definedCodes.contains(rc & 0xff), "\(call) returned \(rc), not a code of courier.h")
        precondition(allowed.contains(rc) || allowed.contains(rc & 0xff), "\(call) returned \(rc)")
    }

    /// What the header grammar allows: a token name, a value without CR, LF or NUL (a C string
    /// ends at its NUL, so the C caller's value is the part before it). The token set is spelled
    /// out here on purpose, not taken from `ByteClass`: an oracle must not share the code it checks.
    private static func isSendable(_ name: [UInt8]?, _ value: [UInt8]?) -> Bool {
        guard let name, let value else { return false }
        let visibleName = name.prefix { $0 != 0 }
        let visibleValue = value.prefix { $0 != 0 }
        let tokenBytes = Set(Array("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))
        return !visibleName.isEmpty && visibleName.allSatisfy(tokenBytes.contains)
            && !visibleValue.contains(0x0D) && !visibleValue.contains(0x0A)
    }

    private static func withOptionalCString<R>(_ bytes: [UInt8]?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let bytes else { return body(nil) }
        return (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { body($0) }
        }
    }

    /// The script's bytes, read as arguments.
    private struct Script {
        let input: UnsafeRawBufferPointer
        var index = 0
        init(_ input: UnsafeRawBufferPointer) { self.input = input }

        mutating func byte() -> UInt8? {
            guard index < input.count else { return nil }
            defer { index += 1 }
            return input[index]
        }

        mutating func flag() -> Bool { (byte() ?? 0) & 1 == 1 }

        /// nil (a NULL argument) for a length byte of 255; otherwise that many bytes (at most 40).
        mutating func string() -> [UInt8]? {
            let length = byte() ?? 0
            if length == 255 { return nil }
            return bytes(count: Int(length % 41))
        }

        mutating func bytes() -> [UInt8] { bytes(count: Int(byte() ?? 0)) }

        mutating func bytes(count: Int) -> [UInt8] {
            var out: [UInt8] = []
            for _ in 0..<count { guard let b = byte() else { break }; out.append(b) }
            return out
        }

        mutating func int() -> Int {
            // Small values matter most (option selectors), but any 32-bit value is possible.
            guard let first = byte() else { return 0 }
            if first & 0x80 == 0 { return Int(first) - 16 }
            var value: UInt32 = 0
            for _ in 0..<4 { value = value << 8 | UInt32(byte() ?? 0) }
            return Int(Int32(bitPattern: value))
        }

        mutating func int64() -> Int64 {
            guard let first = byte() else { return 0 }
            if first & 0x80 == 0 { return Int64(first) * 100 - 1000 }
            var value: UInt64 = 0
            for _ in 0..<8 { value = value << 8 | UInt64(byte() ?? 0) }
            return Int64(bitPattern: value)
        }
    }
}
