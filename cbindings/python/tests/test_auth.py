"""Basic and Bearer authentication through the Python binding, against the scripted server's
/echo (COURIER_TEST_SCRIPTED), and Digest answered by the library (COURIER_TEST_DIGEST,
Tests/Servers/digest_server.py). Started by the Swift suite like test_courier.py."""

import asyncio
import json
import os
import threading
import time
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]
TOKENS = os.environ["COURIER_TEST_TOKENS"]
DIGEST = os.environ["COURIER_TEST_DIGEST"]  # user ann, password s3cret


def authorization(response):
    for name, value in json.loads(response.body)["headers"]:
        if name.lower() == "authorization":
            return value
    return None


class AuthTests(unittest.TestCase):
    def test_basic_and_bearer(self):
        with courier.Engine(SCRIPTED) as engine:
            self.assertEqual(authorization(engine.get("/echo", auth=("Aladdin", "open sesame"))),
                             "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
            self.assertEqual(authorization(engine.get("/echo", auth=courier.Bearer("py-token"))), "Bearer py-token")
            self.assertIsNone(authorization(engine.get("/echo")))
            with self.assertRaises(courier.CourierError):
                engine.get("/echo", auth=courier.Bearer("bad\r\ntoken"))
            with self.assertRaises(courier.CourierError):
                engine.get("/echo", auth="user:pass")


class ChallengeTests(unittest.TestCase):
    def test_refused_requests_share_one_refresh(self):
        calls = []

        def refresh(challenge):
            calls.append(challenge)
            time.sleep(0.1)
            with courier.Engine(TOKENS) as tokens:
                return courier.Bearer(tokens.get("/token").text)

        async def many(engine):
            return await asyncio.gather(*[engine.fetch("GET", "/protected") for _ in range(20)])

        with courier.Engine(TOKENS, auth=courier.Bearer("expired"), on_challenge=refresh) as engine:
            responses = asyncio.run(many(engine))
            self.assertEqual([r.status for r in responses], [200] * 20)
            self.assertEqual(len(calls), 1)
            self.assertEqual((calls[0].status, calls[0].is_proxy), (401, False))
            self.assertIn('Bearer realm="test"', calls[0].schemes)
            self.assertEqual(engine.get("/protected").status, 200)
        self.assertEqual(len(calls), 1, "later requests start with the refreshed token")

    def test_declining_or_failing_keeps_the_401(self):
        reported = []
        previous, sys.unraisablehook = sys.unraisablehook, reported.append
        try:
            for refresh in (lambda challenge: None, lambda challenge: 1 / 0):
                with courier.Engine(TOKENS, on_challenge=refresh, accepted_status=(200, 500)) as engine:
                    self.assertEqual(engine.get("/protected").status, 401)
        finally:
            sys.unraisablehook = previous
        self.assertEqual([r.exc_type for r in reported], [ZeroDivisionError], "the failing refresh was reported")
        with self.assertRaises(courier.CourierError):
            courier.Engine(TOKENS, auth=courier.Bearer("x"))

    def test_a_refresh_that_hangs_releases_the_request(self):
        released = threading.Event()

        def hang(challenge):
            released.wait(30)
            return courier.Bearer("late")

        try:
            with courier.Engine(TOKENS, auth=courier.Bearer("expired"), on_challenge=hang, challenge_timeout=0.2,
                                accepted_status=(200, 500)) as engine:
                self.assertEqual(engine.get("/protected").status, 401, "the refusal, at the timeout")
        finally:
            released.set()
        with self.assertRaises(courier.CourierError):
            courier.Engine(TOKENS, on_challenge=hang, challenge_timeout=0)


class LibraryDigestTests(unittest.TestCase):
    """``auth=DigestAuth(...)`` on an Engine request: the library answers the challenge itself."""

    def test_answered_in_the_library(self):
        with courier.Engine(DIGEST, accepted_status=(200, 600)) as engine:
            answered = engine.get("/sha256/py?q=1", auth=courier.DigestAuth("ann", "s3cret"))
            self.assertEqual((answered.status, answered.body), (200, b"GET /sha256/py?q=1 0"))
            posted = engine.post("/md5sess/py", data=b"x" * 1000, auth=courier.DigestAuth("ann", "s3cret"))
            self.assertEqual((posted.status, posted.body), (200, b"POST /md5sess/py 1000"))
            refused = engine.get("/sha256/py", auth=courier.DigestAuth("ann", "wrong"))
            self.assertEqual(refused.status, 401)
            seen = json.loads(engine.get("/log").body)
        self.assertEqual([bool(field) for field in seen[:6]], [False, True] * 3, "one answer per request, none up front")
        self.assertIn("algorithm=SHA-256", seen[1])


if __name__ == "__main__":
    unittest.main()
