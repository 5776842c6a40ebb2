"""httpx's ``Limits`` and ``verify=ssl.SSLContext``, as far as Courier's model takes them.

``Limits(max_connections=)`` becomes the per-host limit of each host the client talks to: the
queue and the pool are the process's (one for C, Swift and Python), so the limit holds for every
caller of that host, which is what it is for (not overloading a server). Idle connections are
the pool's: ``max_keepalive_connections`` and ``keepalive_expiry`` are accepted for httpx's code
and have no per-client effect (the pool keeps at most the host limit idle, 60 s).

An ``ssl.SSLContext`` is taken over where it can be read back: ``verify_mode`` CERT_NONE (no
verification), the CA certificates it loaded (written to a private file the library loads), and
its minimum and maximum versions. What cannot be read back is refused by name: hostname checks
turned off with verification on (Courier verifies the name whenever it verifies the chain). A
client certificate loaded into the context cannot be seen from Python: pass ``cert=``."""

import atexit
import os
import sys

from ._errors import UsageError
from . import _native


class Limits:
    """``Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)``."""

    def __init__(self, *, max_connections=None, max_keepalive_connections=None, keepalive_expiry=5.0):
        if max_connections is not None and max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self.max_keepalive_connections = max_keepalive_connections
        self.keepalive_expiry = keepalive_expiry

    def __eq__(self, other):
        return isinstance(other, Limits) and (self.max_connections, self.max_keepalive_connections, self.keepalive_expiry) == (
            other.max_connections, other.max_keepalive_connections, other.keepalive_expiry)

    def __repr__(self):
        return "Limits(max_connections=%r, max_keepalive_connections=%r, keepalive_expiry=%r)" % (
            self.max_connections, self.max_keepalive_connections, self.keepalive_expiry)


#: CA files written for contexts, kept for the life of the process (a client may outlive its
#: constructor's caller, and the library reads the file when a connection needs it).
_ca_files = []


@atexit.register
def _remove_ca_files():
    for path in _ca_files:
        try:
            os.unlink(path)
        except OSError:
            pass


def tls_options_of(verify):
    """``verify=`` as (verify, request options): True, False and a CA path pass as they are; an
    SSLContext becomes what the library can take of it (see the module's notes)."""
    # (ssl is imported by whoever made a context: a program without one never loads it here.)
    ssl = sys.modules.get("ssl")
    if ssl is None or not isinstance(verify, ssl.SSLContext):
        return verify, {}
    import tempfile
    versions = {ssl.TLSVersion.TLSv1_2: "1.2", ssl.TLSVersion.TLSv1_3: "1.3"}
    context = verify
    if context.verify_mode == ssl.CERT_NONE:
        return False, {}
    if not context.check_hostname:
        raise UsageError(_native.E_INVALID_ARGUMENT, "verify=SSLContext with check_hostname=False but certificate "
                         "verification on: Courier checks the host name whenever it verifies the chain "
                         "(use verify=False to verify nothing)")
    options = {}
    low, high = versions.get(context.minimum_version), versions.get(context.maximum_version)
    if low or high:
        options["tls_version"] = (low, high)
    certificates = context.get_ca_certs(binary_form=True)
    if certificates:
        handle, path = tempfile.mkstemp(prefix="courier-ca-", suffix=".pem")
        with os.fdopen(handle, "w") as f:
            for der in certificates:
                f.write(ssl.DER_cert_to_PEM_cert(der))
        _ca_files.append(path)
        return path, options
    # No certificates listed: the context relies on the system's store (OpenSSL's default
    # paths, loaded lazily), which is what Courier verifies against by default too.
    return True, options
