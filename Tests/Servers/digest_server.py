#!/usr/bin/env python3
"""A Digest-authenticating server (RFC 7616) for the Digest tests, checking every answer with its
own arithmetic. Prints its port (and a 0) on the first line. Standard library only; keep-alive.

User "ann", password "s3cret", realm "courier". Paths:
  /sha256/...       SHA-256, qop auth
  /md5sess/...      MD5-sess, qop auth, with an opaque that must come back
  /legacy/...       MD5 without qop (RFC 2069)
  /both/...         two challenges, MD5 first then SHA-256 (the client should take SHA-256)
  /stale/...        the first correct answer is told its nonce is stale (stale=true, a new
                    nonce); the answer with the new nonce is let in
  /log              every Authorization received (JSON list, "" for none); ?clear=1 empties it
A request let in gets 200 with "METHOD URI BODYLENGTH"; a redirect from /sha256/hop to
/sha256/after (302) shows that each hop is answered for its own URI.
"""
import hashlib
import re
import sys
import threading

from keepalive_server import Record, send, serve
import parent_guard

USER, PASSWORD, REALM, OPAQUE = "ann", "s3cret", "courier", "0paque"
RECORD = Record()
LOCK = threading.Lock()
NONCES = {"counter": 0}
STALE_SEEN = set()


def fresh_nonce():
    with LOCK:
        NONCES["counter"] += 1
        return "n%04d" % NONCES["counter"]


def challenge(algorithm, qop=True, opaque=False, stale=False):
    parts = ['realm="%s"' % REALM, 'nonce="%s"' % fresh_nonce(), "algorithm=%s" % algorithm]
    if qop:
        parts.append('qop="auth"')
    if opaque:
        parts.append('opaque="%s"' % OPAQUE)
    if stale:
        parts.append("stale=true")
    return "WWW-Authenticate: Digest " + ", ".join(parts)


def parameters(field):
    return {name.lower(): quoted if quoted else bare
            for name, quoted, bare in re.findall(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))', field)}


def digest_ok(field, method):
    if not field.startswith("Digest "):
        return False, None
    p = parameters(field[7:])
    algorithm = p.get("algorithm", "MD5")
    base = algorithm.upper().replace("-SESS", "")
    h = {"MD5": hashlib.md5, "SHA-256": hashlib.sha256}.get(base)
    if h is None or p.get("username") != USER or p.get("realm") != REALM:
        return False, p
    H = lambda text: h(text.encode()).hexdigest()
    first = H("%s:%s:%s" % (USER, REALM, PASSWORD))
    if algorithm.upper().endswith("-SESS"):
        first = H("%s:%s:%s" % (first, p["nonce"], p.get("cnonce", "")))
    second = H("%s:%s" % (method, p.get("uri")))
    if "qop" in p:
        expected = H("%s:%s:%s:%s:%s:%s" % (first, p["nonce"], p["nc"], p["cnonce"], p["qop"], second))
    else:
        expected = H("%s:%s:%s" % (first, p["nonce"], second))
    return expected == p.get("response"), p


def answer(conn, method, target, headers, body):
    field = headers.get("authorization", "")
    if RECORD.answer_log(conn, target):
        return True
    RECORD.add(field)
    kind = target.split("/")[1]
    algorithm, qop, opaque = {"sha256": ("SHA-256", True, False), "md5sess": ("MD5-sess", True, True),
                              "legacy": ("MD5", False, False), "stale": ("MD5", True, False),
                              "both": ("MD5", True, False)}.get(kind, ("SHA-256", True, False))
    ok, p = digest_ok(field, method)
    if ok and p.get("uri") != target:
        ok = False  # signed for another URI
    if ok and opaque and p.get("opaque") != OPAQUE:
        ok = False
    if ok and kind == "stale" and p["nonce"] not in STALE_SEEN and not STALE_SEEN:
        STALE_SEEN.add(p["nonce"])
        send(conn, "401 Unauthorized", b"stale", [challenge(algorithm, stale=True)])
        return True
    if not ok:
        fields = [challenge(algorithm, qop, opaque)]
        if kind == "both":
            fields.append(challenge("SHA-256"))
        send(conn, "401 Unauthorized", b"who are you?", fields)
        return True
    if target == "/sha256/hop":
        send(conn, "302 Found", b"", ["Location: /sha256/after"])
        return True
    send(conn, "200 OK", ("%s %s %d" % (method, target, len(body))).encode())
    return True


if __name__ == "__main__":
    parent_guard.start()
    serve(answer)
