"""httpx's documented habits with ``import courier as httpx``: the exception tree and
``exc.request``, ``Request``/``URL``/``QueryParams``, ``build_request`` and ``send``,
``next_request``, ``codes``, the reading methods of responses and streams, the client's
attributes, ``Cookies``, a settable ``encoding``, httpx's default timeout and a clean TypeError.
Against the suite's scripted and cookie servers (see test_courier.py)."""

import asyncio
import json
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier as httpx  # noqa: E402

SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]
COOKIES = os.environ["COURIER_TEST_COOKIES"]
SELFSIGNED = os.environ.get("COURIER_TEST_SELFSIGNED")


class Exceptions(unittest.TestCase):
    def test_the_tree_is_httpx_s(self):
        tree = [("RequestError", "HTTPError"), ("TransportError", "RequestError"), ("TimeoutException", "TransportError"),
                ("ConnectTimeout", "TimeoutException"), ("ReadTimeout", "TimeoutException"), ("WriteTimeout", "TimeoutException"),
                ("PoolTimeout", "TimeoutException"), ("NetworkError", "TransportError"), ("ConnectError", "NetworkError"),
                ("ReadError", "NetworkError"), ("WriteError", "NetworkError"), ("CloseError", "NetworkError"),
                ("ProtocolError", "TransportError"), ("LocalProtocolError", "ProtocolError"),
                ("RemoteProtocolError", "ProtocolError"), ("ProxyError", "TransportError"),
                ("UnsupportedProtocol", "TransportError"), ("DecodingError", "RequestError"),
                ("TooManyRedirects", "RequestError"), ("HTTPStatusError", "HTTPError"), ("StreamConsumed", "StreamError"),
                ("StreamClosed", "StreamError"), ("ResponseNotRead", "StreamError"), ("RequestNotRead", "StreamError"),
                ("StreamError", "RuntimeError"), ("TLSError", "ConnectError"), ("CourierError", "HTTPError")]
        for child, parent in tree:
            base = getattr(httpx, parent, None) or getattr(__builtins__, parent, None) or RuntimeError
            self.assertTrue(issubclass(getattr(httpx, child), base), "%s < %s" % (child, parent))
        self.assertTrue(issubclass(httpx.CookieConflict, Exception))
        with self.assertRaises(RuntimeError):
            httpx.ConnectError(7).request  # raised outside a request: httpx's RuntimeError

    def test_failures_carry_their_request(self):
        with httpx.Client() as client:
            with self.assertRaises(httpx.ConnectError) as caught:
                client.get("http://127.0.0.1:1/nothing", headers={"X-Mine": "1"})
            self.assertEqual(caught.exception.request.method, "GET")
            self.assertEqual(caught.exception.request.url, "http://127.0.0.1:1/nothing")
            self.assertEqual(caught.exception.request.headers["x-mine"], "1")
            with self.assertRaises(httpx.ReadTimeout) as slow:
                client.get(SCRIPTED + "/slow?ms=2000", timeout=httpx.Timeout(5.0, read=0.2))
            self.assertEqual(slow.exception.request.url.path, "/slow")
            failed = client.get(SCRIPTED + "/status?code=503")
            with self.assertRaises(httpx.HTTPStatusError) as status:
                failed.raise_for_status()
            self.assertIs(status.exception.response, failed)
            self.assertEqual(status.exception.request.url, SCRIPTED + "/status?code=503")

    @unittest.skipUnless(SELFSIGNED, "no self-signed server")
    def test_a_certificate_failure_is_a_connect_error(self):
        try:
            response = httpx.get(SELFSIGNED + "/small")
            self.fail("answered: %r %r %r %r" % (response, response.tls_verify_result, response.reused_connection, response.tls_resumed))
        except httpx.ConnectError as error:
            caught = type("Caught", (), {"exception": error})
        self.assertIsInstance(caught.exception, httpx.TLSError)
        self.assertEqual(caught.exception.request.url.scheme, "https")


class URLsAndRequests(unittest.TestCase):
    def test_url_parts_and_copies(self):
        url = httpx.URL("https://user:pw@EXAMPLE.org:8443/a%20b?x=1&x=2#top")
        self.assertEqual((url.scheme, url.host, url.port, url.path, url.query, url.fragment),
                         ("https", "example.org", 8443, "/a b", b"x=1&x=2", "top"))
        self.assertEqual((url.username, url.password, url.raw_path), ("user", "pw", b"/a%20b?x=1&x=2"))
        self.assertEqual(url.params.get_list("x"), ["1", "2"])
        self.assertEqual(url, str(url))
        self.assertIsNone(httpx.URL("https://example.org:443/").port, "the default port is None")
        self.assertEqual(url.copy_with(scheme="http", port=None, fragment=""), "http://user:pw@example.org/a%20b?x=1&x=2")
        self.assertEqual(url.copy_set_param("x", "9").params.multi_items(), [("x", "9")])
        self.assertEqual(httpx.URL("https://e.org/a/b").join("../c"), "https://e.org/c")
        self.assertTrue(httpx.URL("/rel").is_relative_url)
        params = httpx.QueryParams("a=1&a=2&b=3")
        self.assertEqual((params["a"], params.get_list("a"), str(params.merge({"a": "9"}))), ("1", ["1", "2"], "b=3&a=9"))

    def test_request_objects_and_send(self):
        request = httpx.Request("post", SCRIPTED + "/echo", params={"q": "1"}, json={"k": "v"}, headers={"X-A": "b"})
        self.assertEqual((request.method, request.url.params["q"], request.content), ("POST", "1", b'{"k":"v"}'))
        self.assertEqual(request.headers["content-type"], "application/json")
        with httpx.Client(headers={"X-Client": "c"}, params={"p": "0"}) as client:
            built = client.build_request("PUT", SCRIPTED + "/echo", content=b"body", headers={"X-Call": "d"})
            self.assertEqual((built.headers["x-client"], built.headers["x-call"], built.url.params["p"]), ("c", "d", "0"))
            response = client.send(built)
            echoed = response.json()
            self.assertEqual((echoed["method"], echoed["body"]), ("PUT", "body"))
            self.assertIs(response.request, built)
            self.assertEqual(client.send(request).json()["body"], '{"k":"v"}')
            streamed = client.send(client.build_request("GET", SCRIPTED + "/chunked"), stream=True)
            with streamed:
                self.assertEqual(streamed.read(), b"chunk encoded")
        generator = httpx.Request("POST", SCRIPTED + "/echo", content=(piece for piece in [b"a", b"b"]))
        with self.assertRaises(httpx.RequestNotRead):
            generator.content
        self.assertEqual(generator.read(), b"ab")

    def test_next_request_of_a_redirect_not_followed(self):
        with httpx.Client(base_url=SCRIPTED) as client:
            moved = client.post("/redirect", params={"code": "303", "to": "/echo"}, content=b"x")
            self.assertEqual(moved.next_request.method, "GET")
            self.assertEqual(moved.next_request.url, SCRIPTED + "/echo")
            kept = client.post("/redirect", params={"code": "307", "to": "/echo"}, content=b"x")
            self.assertEqual(kept.next_request.method, "POST")
            self.assertEqual(client.send(kept.next_request).json()["method"], "POST")
            self.assertIsNone(client.get("/echo").next_request)

    def test_codes(self):
        self.assertEqual((httpx.codes.OK, httpx.codes.NOT_FOUND, httpx.codes.not_found), (200, 404, 404))
        self.assertEqual(httpx.codes.get_reason_phrase(418), "I'm a Teapot")
        self.assertTrue(httpx.codes.is_success(204) and httpx.codes.is_error(500) and not httpx.codes.is_redirect(200))


class Reading(unittest.TestCase):
    def test_iterators_of_a_response(self):
        with httpx.Client() as client:
            response = client.get(SCRIPTED + "/chunked")
            self.assertEqual(list(response.iter_bytes(chunk_size=5)), [b"chunk", b" enco", b"ded"])
            self.assertEqual("".join(response.iter_text()), "chunk encoded")
            self.assertEqual(response.num_bytes_downloaded, 13)

    def test_iterators_of_a_stream(self):
        with httpx.stream("GET", SCRIPTED + "/chunked") as response:
            self.assertEqual(list(response.iter_bytes(chunk_size=4)), [b"chun", b"k en", b"code", b"d"])
            self.assertEqual(response.num_bytes_downloaded, 13)
            with self.assertRaises(httpx.StreamConsumed):
                list(response.iter_bytes())
            with self.assertRaises(httpx.ResponseNotRead):
                response.content
        with httpx.Client() as client:
            with client.stream("GET", SCRIPTED + "/echo") as response:
                self.assertEqual(json.loads(response.read())["method"], "GET")
                self.assertEqual(response.json()["method"], "GET")
                self.assertIn('"method"', response.text)
                self.assertEqual(b"".join(response.iter_bytes()), response.content, "after read(), from memory")
            lines = client.stream("GET", SCRIPTED + "/gzip")
            with lines:
                got = list(lines.iter_lines())
            self.assertEqual(got, ["gzip line"] * 1000)
            closed = client.stream("GET", SCRIPTED + "/gzip")
            closed.__enter__()
            closed.close()
            with self.assertRaises(httpx.StreamClosed):
                list(closed.iter_raw())

    def test_async_iterators(self):
        async def run():
            async with httpx.AsyncClient() as client:
                async with client.stream("GET", SCRIPTED + "/gzip") as response:
                    lines = [line async for line in response.aiter_lines()]
                async with client.stream("GET", SCRIPTED + "/chunked") as response:
                    texts = [text async for text in response.aiter_text(chunk_size=6)]
                request = client.build_request("GET", SCRIPTED + "/chunked")
                streamed = await client.send(request, stream=True)
                async with streamed:
                    raw = [piece async for piece in streamed.aiter_raw()]
                return lines, texts, raw
        lines, texts, raw = asyncio.run(run())
        self.assertEqual(lines, ["gzip line"] * 1000)
        self.assertEqual(texts, ["chunk ", "encode", "d"])
        self.assertEqual(b"".join(raw), b"chunk encoded")

    def test_encoding_can_be_set(self):
        response = httpx.get(SCRIPTED + "/latin1")
        self.assertEqual((response.encoding, response.text), ("ISO-8859-1", "café"))
        response.encoding = "utf-8"
        with self.assertRaises(httpx.DecodingError):
            response.text


class Clients(unittest.TestCase):
    def test_attributes_are_read_and_changed(self):
        with httpx.Client() as client:
            self.assertEqual(client.timeout, httpx.Timeout(5.0), "httpx's default timeout")
            client.headers["X-Token"] = "one"
            client.headers.update({"X-Other": "two"})
            client.params = {"page": "3"}
            echoed = client.get(SCRIPTED + "/echo").json()
            self.assertIn(["X-Token", "one"], echoed["headers"])
            self.assertIn(["X-Other", "two"], echoed["headers"])
            self.assertEqual(echoed["query"], {"page": "3"})
            del client.headers["x-token"]
            self.assertNotIn(["X-Token", "one"], client.get(SCRIPTED + "/echo").json()["headers"])
            client.auth = ("user", "pass")
            self.assertIn(["Authorization", "Basic dXNlcjpwYXNz"], client.get(SCRIPTED + "/echo").json()["headers"])

    def test_cookies_as_a_mapping(self):
        with httpx.Client(base_url=COOKIES, cookies={"first": "1"}) as client:
            response = client.get("/set", params={"c": "session=abc; Path=/"})
            self.assertEqual(response.cookies["session"], "abc")
            self.assertEqual(client.cookies["session"], "abc")
            client.cookies["extra"] = "x"
            sent = client.get("/echo").text
            self.assertEqual(sorted(sent.split("; ")), ["extra=x", "first=1", "session=abc"])
            client.cookies.delete("session")
            self.assertEqual(sorted(client.get("/echo").text.split("; ")), ["extra=x", "first=1"])
        cookies = httpx.Cookies()
        cookies.set("a", "1", domain="one.example")
        cookies.set("a", "2", domain="two.example")
        with self.assertRaises(httpx.CookieConflict):
            cookies.get("a")
        self.assertEqual(cookies.get("a", domain="two.example"), "2")

    def test_unknown_keywords_are_a_clean_type_error(self):
        noise = []
        previous, sys.unraisablehook = sys.unraisablehook, noise.append
        try:
            with self.assertRaises(TypeError):
                httpx.Client(no_such_option=1)
            with self.assertRaises(TypeError):
                httpx.AsyncClient(no_such_option=1)
            with httpx.Client() as client:
                with self.assertRaises(TypeError):
                    client.get(SCRIPTED + "/echo", no_such_option=1)
            import gc
            gc.collect()
        finally:
            sys.unraisablehook = previous
        self.assertEqual(noise, [], "no noise from a half-built object")


if __name__ == "__main__":
    unittest.main()
