"""ctypes declarations of include/courier.h: every function with its exact argument and result types.

Declaring argtypes and restype matters: without them ctypes passes pointers as C ints and
truncates them on 64-bit systems.
"""

import ctypes
import os

c_int, c_char_p, c_void_p, c_size_t = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t
c_double, c_int64, c_uint64 = ctypes.c_double, ctypes.c_int64, ctypes.c_uint64
P = ctypes.POINTER

# Handles stay opaque: void pointers.
engine_p = c_void_p
request_p = c_void_p
response_p = c_void_p
cache_p = c_void_p

DONE_FN = ctypes.CFUNCTYPE(None, request_p, response_p, c_int, c_void_p)
PROGRESS_FN = ctypes.CFUNCTYPE(None, request_p, c_int, c_uint64, c_int64, c_void_p)
ACTIVITY_FN = ctypes.CFUNCTYPE(None, c_int, c_int, c_void_p)
WRITE_FN = ctypes.CFUNCTYPE(c_size_t, c_void_p, c_size_t, c_void_p)
# courier_destination_fn: returns a path's address (c_void_p: ctypes cannot return a char * it keeps).
DESTINATION_FN = ctypes.CFUNCTYPE(c_void_p, request_p, c_void_p, c_void_p)
READ_FN = ctypes.CFUNCTYPE(c_int64, c_void_p, c_size_t, c_void_p)
HEAD_FN = ctypes.CFUNCTYPE(None, request_p, response_p, c_void_p)
READABLE_FN = ctypes.CFUNCTYPE(None, request_p, c_void_p)
RETRY_FN = ctypes.CFUNCTYPE(c_int, request_p, c_int, c_int, c_int, c_void_p)
REQUEST_HOOK_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p)
RESPONSE_HOOK_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p)
REDIRECT_HOOK_FN = ctypes.CFUNCTYPE(c_int, c_int, c_char_p, c_char_p, ctypes.POINTER(ctypes.c_char), c_size_t, c_void_p)
METRICS_HOOK_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_int, c_void_p)
CHALLENGE_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_char_p, c_char_p, c_int, ctypes.POINTER(ctypes.c_char), c_size_t)
group_p = c_void_p
cookiejar_p = c_void_p
hsts_p = c_void_p
outbox_p = c_void_p
NETWORK_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)
OUTBOX_FN = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_char_p, c_int, c_int)
DEBUG_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, ctypes.POINTER(ctypes.c_char), c_size_t, c_void_p)

WRITEFUNC_PAUSE = ctypes.c_size_t(-1).value
READFUNC_ABORT = -1
READFUNC_PAUSE = -2
FOLLOW_AUTO_REFERER = 2  # courier_request_set_redirects: follow, each hop sending its Referer

ABI_VERSION = 1

OK = 0
E_MISUSE = 1
E_INVALID_ARGUMENT = 2
E_TIMEOUT = 8
E_CANCELLED = 18
E_RESPONSE_FORMAT = 23
E_HTTP_STATUS = 24
E_NOT_FOUND = 25
E_DNS_PROXY = 6 | (1 << 8)
E_CONNECT_PROXY = 7 | (1 << 8)
E_CONNECT_NO_ROUTE = 7 | (2 << 8)
E_PROXY = 29
E_REJECTED = 30
E_REDIRECT_REFUSED = 16 | (4 << 8)
E_PROXY_REFUSED = E_PROXY | (1 << 8)
E_PROXY_HANDSHAKE = E_PROXY | (2 << 8)
E_PROXY_CLOSED = E_PROXY | (3 << 8)
E_PROXY_UNSUPPORTED = E_PROXY | (4 << 8)
E_PROXY_SOCKS_CONNECT = E_PROXY | (5 << 8)
E_PROXY_SOCKS_AUTH = E_PROXY | (6 << 8)
E_PROXY_SOCKS_HANDSHAKE = E_PROXY | (7 << 8)
E_OUTBOX = 31
E_AGAIN = 32
E_OUTBOX_LOCKED = E_OUTBOX | (1 << 8)
E_OUTBOX_FULL = E_OUTBOX | (2 << 8)
E_OUTBOX_CORRUPT = E_OUTBOX | (3 << 8)
E_FILE_CHANGED = 20 | (4 << 8)
E_INVALIDATED = 1 | (1 << 8)
E_UNSUPPORTED_ENCODING = 17 | (3 << 8)
E_HEADER_BYTES = 13 | (1 << 8)
E_HEADER_COUNT = 13 | (2 << 8)
E_TLS_CIPHER = 22 | (12 << 8)

_SIGNATURES = {
    "courier_version_number": (c_int, []),
    "courier_version": (c_char_p, []),
    "courier_strerror": (c_char_p, [c_int]),
    "courier_json_pretty": (c_int, [c_char_p, c_size_t, c_char_p, c_size_t, P(c_size_t)]),
    "courier_shutdown": (c_int, []),
    "courier_queue_width": (c_int, []),
    "courier_queue_set_width": (c_int, [c_int]),
    "courier_queue_set_host_limit": (c_int, [c_char_p, c_int]),
    "courier_queue_activity": (c_int, [P(c_int), P(c_int)]),
    "courier_queue_observe": (c_int, [ACTIVITY_FN, c_void_p, P(c_int)]),
    "courier_queue_unobserve": (c_int, [c_int]),
    "courier_engine_create": (c_int, [c_char_p, P(engine_p)]),
    "courier_engine_destroy": (None, [engine_p]),
    "courier_engine_add_header": (c_int, [engine_p, c_char_p, c_char_p]),
    "courier_engine_set_accepted_status": (c_int, [engine_p, c_int, c_int]),
    "courier_engine_fd": (c_int, [engine_p]),
    "courier_engine_next_done": (c_int, [engine_p, P(request_p), P(response_p), P(c_int)]),
    "courier_engine_set_cache": (c_int, [engine_p, cache_p]),
    "courier_engine_set_proxy": (c_int, [engine_p, c_char_p, c_char_p]),
    "courier_engine_set_proxy_tls": (c_int, [engine_p, c_char_p, c_char_p, c_int]),
    "courier_engine_set_unix_socket": (c_int, [engine_p, c_char_p, c_int]),
    "courier_engine_set_local_address": (c_int, [engine_p, c_char_p]),
    "courier_engine_cancel_all": (c_int, [engine_p]),
    "courier_engine_invalidate": (c_int, [engine_p, c_int]),
    "courier_engine_set_trust": (c_int, [engine_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]),
    "courier_engine_set_tls_pin_mode": (c_int, [engine_p, c_int]),
    "courier_engine_cancel_where": (c_int, [engine_p, ctypes.c_void_p, ctypes.c_void_p]),
    "courier_request_curl_command": (c_int, [request_p, c_char_p, c_size_t, P(c_size_t)]),
    "courier_request_set_time_condition": (c_int, [request_p, c_int, ctypes.c_int64]),
    "courier_engine_set_authenticator": (c_int, [engine_p, c_char_p, CHALLENGE_FN, c_void_p]),
    "courier_engine_set_challenge_timeout": (c_int, [engine_p, c_int64]),
    "courier_network_status": (c_int, [P(c_int), ctypes.c_char_p, c_size_t]),
    "courier_network_watch": (c_int, [NETWORK_FN, c_void_p, P(c_int)]),
    "courier_network_unwatch": (None, [c_int]),
    "courier_network_set_override": (c_int, [c_int]),
    "courier_queue_follow_network": (c_int, [c_int, c_int, c_int, c_int]),
    "courier_network_reachability": (c_int, [c_char_p, P(c_int), P(c_int), ctypes.c_char_p, c_size_t]),
    "courier_engine_watch_network": (c_int, [engine_p, c_int]),
    "courier_engine_set_timeout": (c_int, [engine_p, c_int, c_int64]),
    "courier_engine_set_redirects": (c_int, [engine_p, c_int, c_int]),
    "courier_engine_set_http_version": (c_int, [engine_p, c_int]),
    "courier_engine_set_tls_verify": (c_int, [engine_p, c_int]),
    "courier_engine_set_tls_system_roots": (c_int, [engine_p, c_int]),
    "courier_engine_set_tls_ca": (c_int, [engine_p, c_char_p, c_char_p]),
    "courier_engine_set_tls_client_certificate": (c_int, [engine_p, c_char_p, c_char_p, c_char_p]),
    "courier_engine_set_tls_versions": (c_int, [engine_p, c_int, c_int]),
    "courier_engine_next_network": (c_int, [engine_p, P(c_int), ctypes.c_char_p, c_size_t]),
    "courier_outbox_open": (c_int, [c_char_p, c_int64, P(outbox_p)]),
    "courier_outbox_close": (None, [outbox_p]),
    "courier_outbox_count": (c_int, [outbox_p]),
    "courier_outbox_set_aside_count": (c_int, [outbox_p]),
    "courier_outbox_flush": (c_int, [outbox_p]),
    "courier_outbox_on_finished": (c_int, [outbox_p, c_char_p, OUTBOX_FN, c_void_p]),
    "courier_engine_set_outbox": (c_int, [engine_p, outbox_p]),
    "courier_request_freeze": (c_int, [request_p, c_char_p]),
    "courier_request_outbox_id": (c_char_p, [request_p]),
    "courier_engine_set_hooks": (c_int, [engine_p, REQUEST_HOOK_FN, RESPONSE_HOOK_FN, REDIRECT_HOOK_FN, METRICS_HOOK_FN, c_void_p]),
    "courier_engine_set_debug": (c_int, [engine_p, DEBUG_FN, c_void_p]),
    "courier_outgoing_method": (c_char_p, [c_void_p]),
    "courier_outgoing_url": (c_char_p, [c_void_p]),
    "courier_outgoing_header": (c_char_p, [c_void_p, c_char_p]),
    "courier_outgoing_body": (c_void_p, [c_void_p, P(c_size_t)]),
    "courier_outgoing_set_header": (c_int, [c_void_p, c_char_p, c_char_p]),
    "courier_request_set_proxy": (c_int, [request_p, c_char_p, c_char_p]),
    "courier_cache_create": (c_int, [c_char_p, c_int64, c_int64, P(cache_p)]),
    "courier_cache_destroy": (None, [cache_p]),
    "courier_cache_stat": (c_int, [cache_p, c_int, P(c_int64)]),
    "courier_cache_drop_memory": (c_int, [cache_p]),
    "courier_cache_clear": (c_int, [cache_p]),
    "courier_cache_flush": (c_int, [cache_p]),
    "courier_request_create": (c_int, [engine_p, c_char_p, c_char_p, P(request_p)]),
    "courier_request_free": (None, [request_p]),
    "courier_request_add_header": (c_int, [request_p, c_char_p, c_char_p]),
    "courier_request_remove_header": (c_int, [request_p, c_char_p]),
    "courier_request_set_body": (c_int, [request_p, c_void_p, c_size_t]),
    "courier_request_set_body_file": (c_int, [request_p, c_char_p]),
    "courier_request_add_param": (c_int, [request_p, c_char_p, c_char_p]),
    "courier_request_set_param_encoding": (c_int, [request_p, c_int]),
    "courier_request_set_priority": (c_int, [request_p, c_int]),
    "courier_request_set_timeout": (c_int, [request_p, c_int, c_int64]),
    "courier_request_set_redirects": (c_int, [request_p, c_int, c_int]),
    "courier_request_add_resolve": (c_int, [request_p, c_char_p]),
    "courier_request_add_connect_to": (c_int, [request_p, c_char_p]),
    "courier_request_set_ip_family": (c_int, [request_p, c_int]),
    "courier_request_set_decompress": (c_int, [request_p, c_int]),
    "courier_request_set_max_body": (c_int, [request_p, c_int64]),
    "courier_request_set_output_file": (c_int, [request_p, c_char_p]),
    "courier_request_set_tls_ca": (c_int, [request_p, c_char_p, c_char_p]),
    "courier_request_set_tls_verify": (c_int, [request_p, c_int]),
    "courier_request_set_tls_system_roots": (c_int, [request_p, c_int]),
    "courier_request_set_tls_client_certificate": (c_int, [request_p, c_char_p, c_char_p, c_char_p]),
    "courier_request_set_tls_pins": (c_int, [request_p, c_char_p]),
    "courier_request_set_tls_versions": (c_int, [request_p, c_int, c_int]),
    "courier_request_set_tls_ciphers": (c_int, [request_p, c_char_p, c_char_p]),
    "courier_request_set_tls_curves": (c_int, [request_p, c_char_p]),
    "courier_request_set_tls_alpn": (c_int, [request_p, c_int]),
    "courier_request_set_http_version": (c_int, [request_p, c_int]),
    "courier_request_set_happy_eyeballs": (c_int, [request_p, c_int64]),
    "courier_request_set_http2_ping_interval": (c_int, [request_p, c_int64]),
    "courier_request_set_continue_timeout": (c_int, [request_p, c_int64]),
    "courier_request_set_header_limits": (c_int, [request_p, c_int64, c_int]),
    "courier_request_set_proxy_tunnel": (c_int, [request_p, c_int]),
    "courier_request_set_progress": (c_int, [request_p, PROGRESS_FN, c_void_p]),
    "courier_request_set_cache_policy": (c_int, [request_p, c_int]),
    "courier_request_set_coalescing": (c_int, [request_p, c_int]),
    "courier_request_add_write_callback": (c_int, [request_p, WRITE_FN, c_void_p]),
    "courier_request_set_destination": (c_int, [request_p, DESTINATION_FN, c_void_p]),
    "courier_request_set_head_callback": (c_int, [request_p, HEAD_FN, c_void_p]),
    "courier_request_set_body_callback": (c_int, [request_p, READ_FN, c_int64, c_void_p]),
    "courier_request_resume": (c_int, [request_p]),
    "courier_request_set_body_reader": (c_int, [request_p, c_size_t, READABLE_FN, c_void_p]),
    "courier_request_read": (c_int, [request_p, c_void_p, c_size_t, P(c_size_t), c_int]),
    "courier_request_get_readable_fd": (c_int, [request_p, P(c_int)]),
    "courier_request_add_form_field": (c_int, [request_p, c_char_p, c_char_p]),
    "courier_request_add_form_data": (c_int, [request_p, c_char_p, c_void_p, c_size_t, c_char_p, c_char_p]),
    "courier_request_add_form_file": (c_int, [request_p, c_char_p, c_char_p, c_char_p, c_char_p]),
    "courier_request_set_resume_file": (c_int, [request_p, c_char_p, c_int]),
    "courier_request_set_expect_continue": (c_int, [request_p, c_int]),
    "courier_request_set_rate_limit": (c_int, [request_p, c_int64, c_int64]),
    "courier_request_send": (c_int, [request_p, DONE_FN, c_void_p]),
    "courier_request_enqueue": (c_int, [request_p]),
    "courier_request_perform": (c_int, [request_p, P(response_p)]),
    "courier_request_cancel": (c_int, [request_p]),
    "courier_request_errmsg": (c_char_p, [request_p]),
    "courier_response_status": (c_int, [response_p]),
    "courier_response_body": (P(ctypes.c_uint8), [response_p, P(c_size_t)]),
    "courier_response_body_size": (c_int64, [response_p]),
    "courier_response_header_count": (c_size_t, [response_p]),
    "courier_response_header_at": (c_int, [response_p, c_size_t, P(c_void_p), P(c_size_t), P(c_void_p), P(c_size_t)]),
    "courier_response_header": (c_char_p, [response_p, c_char_p]),
    "courier_response_url": (c_char_p, [response_p]),
    "courier_response_timing": (c_double, [response_p, c_int]),
    "courier_response_reused_connection": (c_int, [response_p]),
    "courier_response_cache_phase": (c_int, [response_p]),
    "courier_response_is_preview": (c_int, [response_p]),
    "courier_response_cache_status": (c_char_p, [response_p]),
    "courier_response_free": (None, [response_p]),
    "courier_response_reason": (c_char_p, [response_p]),
    "courier_response_http_version": (c_int, [response_p]),
    "courier_response_redirect_count": (c_int, [response_p]),
    "courier_response_history": (response_p, [response_p, c_size_t]),
    "courier_response_bytes_sent": (c_int64, [response_p]),
    "courier_response_bytes_received": (c_int64, [response_p]),
    "courier_response_remote_address": (c_char_p, [response_p]),
    "courier_response_tls": (c_int, [response_p, P(c_int), P(ctypes.c_long)]),
    "courier_response_trailer_count": (c_size_t, [response_p]),
    "courier_response_trailer_at": (c_int, [response_p, c_size_t, P(c_char_p), P(c_char_p)]),
    "courier_request_set_user_data": (c_int, [request_p, c_void_p]),
    "courier_request_user_data": (c_void_p, [request_p]),
    "courier_request_set_retry": (c_int, [request_p, c_int, P(c_int64), c_size_t, ctypes.c_uint]),
    "courier_request_set_retry_limits": (c_int, [request_p, c_int64, c_int64, c_int64]),
    "courier_request_set_retry_statuses": (c_int, [request_p, P(c_int), c_size_t]),
    "courier_request_set_retry_callback": (c_int, [request_p, RETRY_FN, c_void_p]),
    "courier_response_retries": (c_int, [response_p]),
    "courier_response_retry_reason": (c_int, [response_p, c_int, P(c_int)]),
    "courier_group_create": (c_int, [c_int, P(group_p)]),
    "courier_group_add": (c_int, [group_p, request_p]),
    "courier_group_perform": (c_int, [group_p]),
    "courier_group_result": (c_int, [group_p, c_size_t, P(response_p)]),
    "courier_group_free": (None, [group_p]),
    "courier_cookiejar_create": (c_int, [P(cookiejar_p)]),
    "courier_cookiejar_load": (c_int, [cookiejar_p, c_char_p]),
    "courier_cookiejar_save": (c_int, [cookiejar_p, c_char_p]),
    "courier_cookiejar_count": (c_size_t, [cookiejar_p]),
    "courier_cookiejar_clear": (c_int, [cookiejar_p]),
    "courier_cookiejar_free": (None, [cookiejar_p]),
    "courier_request_set_cookiejar": (c_int, [request_p, cookiejar_p]),
    "courier_hsts_create": (c_int, [c_char_p, P(hsts_p)]),
    "courier_hsts_save": (c_int, [hsts_p]),
    "courier_hsts_requires_https": (c_int, [hsts_p, c_char_p]),
    "courier_hsts_free": (None, [hsts_p]),
    "courier_engine_set_hsts": (c_int, [engine_p, hsts_p]),
    "courier_engine_set_mock": (c_int, [engine_p, c_void_p, c_void_p]),
    "courier_mock_reply_set_status": (c_int, [c_void_p, c_int]),
    "courier_mock_reply_add_header": (c_int, [c_void_p, c_char_p, c_char_p]),
    "courier_mock_reply_set_body": (c_int, [c_void_p, c_char_p, c_size_t]),
    "courier_request_set_basic_auth": (c_int, [request_p, c_char_p, c_char_p]),
    "courier_request_set_bearer": (c_int, [request_p, c_char_p]),
    "courier_request_set_digest_auth": (c_int, [request_p, c_char_p, c_char_p]),
}


#: The oldest library this package works with (COURIER_VERSION_NUM packing: 0xMMmmpp): the
#: first to have every function declared above.
MINIMUM_VERSION = 0x000400


def _candidates():
    """Where the library may be, in order: $COURIER_LIBRARY; one bundled into this package (a
    wheel built by `make python-wheel`); what the linker would find (`make install` puts it in
    PREFIX/lib); libcourier.so.<ABI> on the default search path. Lazily: the linker's search
    (ctypes.util, which runs ldconfig and imports subprocess, tempfile and more) only when the
    first two did not do."""
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "libcourier.so.%d" % ABI_VERSION)
    yield os.environ.get("COURIER_LIBRARY")
    yield bundled if os.path.exists(bundled) else None
    import ctypes.util
    yield ctypes.util.find_library("courier")
    yield "libcourier.so.%d" % ABI_VERSION


def _load():
    """The first candidate that loads and is new enough; ImportError saying what each one was."""
    errors = []
    for name in _candidates():
        if not name:
            continue
        try:
            loaded = ctypes.CDLL(name)
        except OSError as error:
            errors.append(str(error))
            continue
        try:
            number = loaded.courier_version_number
        except AttributeError:
            errors.append("%s: not libcourier (no courier_version_number)" % name)
            continue
        number.restype, number.argtypes = c_int, []
        found = number()
        if found >> 16 != MINIMUM_VERSION >> 16 or found < MINIMUM_VERSION:
            errors.append("%s is libcourier %d.%d.%d; this package needs %d.%d or later within ABI %d"
                          % (name, found >> 16, (found >> 8) & 0xFF, found & 0xFF, MINIMUM_VERSION >> 16,
                             (MINIMUM_VERSION >> 8) & 0xFF, ABI_VERSION))
            continue
        return loaded
    raise ImportError("libcourier not found or not usable (set COURIER_LIBRARY to its path, run `make install`, "
                      "or install a wheel built by `make python-wheel`): " + "; ".join(errors))


class _Library:
    """The loaded library, each function declared (restype, argtypes) the first time it is used,
    then kept as an attribute, so later calls find it at once. Declaring all of them at import
    made every `import courier` pay for the 200-odd functions a program mostly never calls (with
    bytecode: 18 ms and 1.2 MiB). Other attributes (`_name`, `_handle`) are the CDLL's."""

    def __init__(self, loaded):
        self._cdll = loaded

    def __getattr__(self, name):
        function = getattr(self._cdll, name)
        signature = _SIGNATURES.get(name)
        if signature is None:
            return function
        function.restype, function.argtypes = signature
        setattr(self, name, function)
        return function


lib = _Library(_load())
