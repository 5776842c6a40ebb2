"""Engine hooks and form bodies through the Python binding, against the scripted server's /echo
(the request as JSON) and /redirect (COURIER_TEST_SCRIPTED). Started by the Swift suite like
test_courier.py."""

import json
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]


def echoed(response):
    return json.loads(response.body)


def header(echo, name):
    for key, value in echo["headers"]:
        if key.lower() == name.lower():
            return value
    return None


class HookTests(unittest.TestCase):
    def test_forms_keep_order_and_repeats(self):
        with courier.Engine(SCRIPTED) as engine:
            echo = echoed(engine.post("/echo", data=[("tag", "b a"), ("tag", "c&d"), ("first", "1")]))
            self.assertEqual(echo["body"], "tag=b+a&tag=c%26d&first=1")
            self.assertEqual(header(echo, "Content-Type"), "application/x-www-form-urlencoded")
            self.assertEqual(echoed(engine.post("/echo", data={"a": ["1", "2"]}))["body"], "a=1&a=2")

    def test_opt_in_validation(self):
        with courier.Engine(SCRIPTED) as engine:
            echo = engine.get("/echo")
            self.assertEqual(echo.media_type, "application/json")
            self.assertEqual(echo.validate(content_types=["application/json"]).json()["method"], "GET")
            self.assertIs(echo.validate(content_types=["application/*"]), echo)
            text = engine.get("/latin1")
            self.assertEqual(text.text, "café", "no validation unless asked for")
            with self.assertRaises(courier.CourierError) as caught:
                text.validate(content_types=["application/json"])
            self.assertEqual(caught.exception.code, 23)
            created = engine.get("/status", params={"code": "203"})
            with self.assertRaises(courier.HTTPStatusError):
                created.validate(statuses=range(200, 203))
            self.assertIs(created.validate(statuses=None), created)

    def test_the_four_hooks(self):
        completed, reported = [], []

        def sign(request):
            request.set_header("X-Signature", "%s %d" % (request.method, len(request.body or b"")))
            self.assertIsNotNone(request.header("User-Agent"))
            if "reject=1" in request.url:
                raise ValueError("not this one")

        def judge(response):
            if b"fail me" in response.body:
                return False

        def redirect(status, source, target):
            if "/forbidden" in target:
                return False
            if "/old" in target:
                return "/echo?rewritten=1"
            return None

        previous, sys.unraisablehook = sys.unraisablehook, reported.append
        try:
            with courier.Engine(SCRIPTED, on_request=sign, on_response=judge, on_redirect=redirect,
                                on_metrics=completed.append) as engine:
                self.assertEqual(header(echoed(engine.post("/echo", content=b"hello")), "X-Signature"), "POST 5")
                with self.assertRaises(courier.CourierError) as caught:
                    engine.post("/echo?reject=1", content=b"x")
                self.assertEqual(caught.exception.code, courier.E_REJECTED)
                with self.assertRaises(courier.CourierError) as caught:
                    engine.post("/echo", content=b"fail me")
                self.assertEqual(caught.exception.code, courier.E_REJECTED)
                self.assertEqual(caught.exception.response.status, 200, "the response stays available")
                with self.assertRaises(courier.CourierError) as caught:
                    engine.get("/redirect", params={"to": "/forbidden"})
                self.assertEqual(caught.exception.code, courier.E_REDIRECT_REFUSED)
                self.assertEqual(echoed(engine.get("/redirect", params={"to": "/old"}))["query"], {"rewritten": "1"})
        finally:
            sys.unraisablehook = previous
        self.assertEqual([r.exc_type for r in reported], [ValueError], "the request hook's exception was reported")
        self.assertEqual([c.code for c in completed],
                         [0, courier.E_REJECTED, courier.E_REDIRECT_REFUSED, 0])
        self.assertEqual(completed[0].status, 200)
        self.assertGreaterEqual(completed[0].timings["total"], 0)


if __name__ == "__main__":
    unittest.main()


class DebugTests(unittest.TestCase):
    def test_on_debug_sees_each_exchanges_heads(self):
        seen = []
        with courier.Engine(SCRIPTED, on_debug=lambda kind, data: seen.append((kind, data))) as engine:
            self.assertEqual(engine.get("/redirect", params={"to": "/echo"}).status, 200)
        kinds = [kind for kind, _ in seen]
        self.assertEqual(kinds.count("header_out"), 2, "the redirect and its target")
        self.assertEqual(kinds.count("header_in"), 2)
        out = [data for kind, data in seen if kind == "header_out"]
        self.assertTrue(out[0].startswith(b"GET /redirect?to=%2Fecho HTTP/1.1\r\n") or out[0].startswith(b"GET /redirect?to=/echo HTTP/1.1\r\n"), out[0])
        self.assertTrue(out[0].endswith(b"\r\n\r\n"))
        incoming = [data for kind, data in seen if kind == "header_in"]
        self.assertTrue(incoming[-1].startswith(b"HTTP/1.1 200"), incoming[-1])
        text = [data for kind, data in seen if kind == "text"]
        self.assertTrue(any(b"Connected to" in line or b"Re-using existing connection" in line for line in text), text)
        self.assertTrue(all(line.endswith(b"\n") for line in text))
