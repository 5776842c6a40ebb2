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
HTTPS = os.environ.get("COURIER_TEST_HTTPS")
CERTS = os.environ.get("COURIER_TEST_CERTS")


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

    def test_fields_read_later_are_each_response_s_own(self):
        """Responses read their headers and facts from the library when first asked: collected
        together, each still reads its own."""
        async def run():
            async with httpx.AsyncClient() as client:
                return await asyncio.gather(*(client.get(SCRIPTED + "/status", params={"code": 200, "body": "x" * i, "n": i})
                                              for i in range(1, 9)))
        responses = asyncio.run(run())
        for i, response in enumerate(responses, start=1):
            self.assertEqual((response.status_code, response.headers["content-length"], response.content), (200, str(i), b"x" * i))
            self.assertEqual((response.url.params["n"], response.history, response.is_preview), (str(i), [], False))

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

    def test_the_default_timeout_does_not_limit_the_queue(self):
        """httpx's Timeout(5.0) is not a 5 s limit on the wait in Courier's queue: with one request
        at a time to the host, the sixth of six 1.1 s requests waits 5.5 s and still goes."""
        httpx.set_host_limit("127.0.0.1", 1)

        async def run():
            async with httpx.AsyncClient() as client:
                return await asyncio.gather(*(client.get(SCRIPTED + "/slow?ms=1100") for _ in range(6)))
        try:
            responses = asyncio.run(run())
        finally:
            httpx.set_host_limit("127.0.0.1", 0)
        self.assertEqual([r.status_code for r in responses], [200] * 6)
        with self.assertRaises(httpx.PoolTimeout):
            httpx.set_host_limit("127.0.0.1", 1)
            try:
                async def limited():
                    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, pool=0.5)) as client:
                        await asyncio.gather(*(client.get(SCRIPTED + "/slow?ms=800") for _ in range(3)))
                asyncio.run(limited())
            finally:
                httpx.set_host_limit("127.0.0.1", 0)

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


class HooksAuthAndTransports(unittest.TestCase):
    def test_event_hooks(self):
        seen = []

        def sign(request):
            request.headers["X-Signed"] = "yes"
            seen.append(("request", request.method, str(request.url)))

        def check(response):
            seen.append(("response", response.status_code))
            response.raise_for_status()

        with httpx.Client(event_hooks={"request": [sign], "response": [check]}) as client:
            with client.stream("GET", SCRIPTED + "/status?code=202") as streamed:
                self.assertEqual(seen[-1], ("response", 202), "a response hook sees a streamed response's head")
                streamed.read()
            del seen[:]
            echoed = client.get(SCRIPTED + "/echo").json()
            self.assertIn(["X-Signed", "yes"], echoed["headers"])
            with self.assertRaises(httpx.HTTPStatusError):
                client.get(SCRIPTED + "/status?code=500")
        self.assertEqual(seen, [("request", "GET", SCRIPTED + "/echo"), ("response", 200),
                                ("request", "GET", SCRIPTED + "/status?code=500"), ("response", 500)])

        async def run():
            calls = []

            async def note(response):
                calls.append(response.status_code)
            async with httpx.AsyncClient(event_hooks={"response": [note]}) as client:
                await client.get(SCRIPTED + "/status?code=204")
            with self.assertRaises(httpx.UsageError):
                httpx.AsyncClient(event_hooks={"response": [lambda r: None]})
            return calls
        self.assertEqual(asyncio.run(run()), [204])

    def test_auth_classes_and_flows(self):
        with httpx.Client() as client:
            basic = client.get(SCRIPTED + "/echo", auth=httpx.BasicAuth("user", "pass")).json()
            self.assertIn(["Authorization", "Basic dXNlcjpwYXNz"], basic["headers"])
            signed = client.get(SCRIPTED + "/echo", auth=lambda request: (request.headers.update({"X-Fn": "1"}), request)[1]).json()
            self.assertIn(["X-Fn", "1"], signed["headers"])

            class Retrying(httpx.Auth):
                """A custom flow: the first answer is a 401, the second request carries a token."""

                def auth_flow(self, request):
                    response = yield request
                    if response.status_code == 401:
                        request.headers["X-Token"] = "second"
                        request.url = httpx.URL(SCRIPTED + "/echo")
                        yield request

            answered = client.get(SCRIPTED + "/status?code=401", auth=Retrying())
            self.assertEqual(answered.status_code, 200)
            self.assertIn(["X-Token", "second"], answered.json()["headers"])
            self.assertEqual([hop.status_code for hop in answered.history], [401])

            import tempfile
            with tempfile.NamedTemporaryFile("w", suffix=".netrc", delete=False) as netrc:
                netrc.write("machine 127.0.0.1 login robot password secret\n")
            os.chmod(netrc.name, 0o600)
            try:
                machine = client.get(SCRIPTED + "/echo", auth=httpx.NetRCAuth(netrc.name)).json()
            finally:
                os.unlink(netrc.name)
            self.assertIn(["Authorization", "Basic cm9ib3Q6c2VjcmV0"], machine["headers"])

    def test_digest_auth_answers_the_challenge(self):
        import hashlib
        state = {"calls": 0}

        def server(request):
            state["calls"] += 1
            given = request.headers.get("authorization", "")
            if not given.startswith("Digest "):
                return httpx.Response(401, headers={"WWW-Authenticate": 'Digest realm="r", nonce="n1", qop="auth", algorithm=SHA-256, opaque="o"'})
            fields = dict(part.strip().split("=", 1) for part in given[7:].split(","))
            fields = {k: v.strip('"') for k, v in fields.items()}

            def h(text):
                return hashlib.sha256(text.encode()).hexdigest()
            # RFC 7616 section 3.4.1, written out here from the RFC.
            expected = h(":".join([h("alice:r:wonderland"), "n1", fields["nc"], fields["cnonce"], "auth",
                                   h("GET:" + fields["uri"])]))
            ok = fields["response"] == expected and fields["opaque"] == "o" and fields["uri"] == "/private?x=1"
            return httpx.Response(200 if ok else 403, text="welcome" if ok else "wrong")

        with httpx.Client(transport=httpx.MockTransport(server)) as client:
            response = client.get("http://digest.test/private?x=1", auth=httpx.DigestAuth("alice", "wonderland"))
        self.assertEqual((response.status_code, response.text, state["calls"]), (200, "welcome", 2))
        # A challenge with no nonce cannot be answered: its 401 is the result, not a KeyError.
        broken = httpx.MockTransport(lambda request: httpx.Response(401, headers={"WWW-Authenticate": 'Digest realm="r"'}))
        with httpx.Client(transport=broken) as client:
            self.assertEqual(client.get("http://digest.test/", auth=httpx.DigestAuth("a", "b")).status_code, 401)

    def test_mock_transport(self):
        def handler(request):
            if request.url.path == "/moved":
                return httpx.Response(301, headers={"Location": "/here"})
            return httpx.Response(200, json={"path": request.url.path, "body": request.content.decode()})

        with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://api.test") as client:
            posted = client.post("/items", json={"a": 1})
            self.assertEqual(posted.json(), {"path": "/items", "body": '{"a":1}'})
            self.assertEqual(posted.headers["content-type"], "application/json")
            moved = client.get("/moved", follow_redirects=True)
            self.assertEqual((moved.url, [h.status_code for h in moved.history]), ("http://api.test/here", [301]))
            self.assertEqual(client.get("/moved").next_request.url, "http://api.test/here")

        async def answer(request):
            return httpx.Response(202, text="later")

        async def run():
            async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
                return await client.get("http://api.test/")
        response = asyncio.run(run())
        self.assertEqual((response.status_code, response.text), (202, "later"))

    def test_http_transport_options(self):
        with self.assertRaises(httpx.UsageError):
            httpx.HTTPTransport(socket_options=[])
        # httpx's local_address: where connections come from ("0.0.0.0": IPv4 only).
        with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as client:
            self.assertEqual(client.get(SCRIPTED + "/echo").json()["peer"][0], "127.0.0.2")
        port = SCRIPTED.rsplit(":", 1)[1]
        with httpx.Client(transport=httpx.HTTPTransport(local_address="0.0.0.0")) as client:
            self.assertEqual(client.get("http://localhost:%s/echo" % port).json()["peer"][0], "127.0.0.1")
        with self.assertRaises(httpx.UsageError):
            httpx.Client(transport=httpx.HTTPTransport(local_address="host!nope")).get(SCRIPTED + "/echo")
        with httpx.Client(transport=httpx.HTTPTransport(local_address="192.0.2.77")) as client:
            with self.assertRaises(httpx.ConnectError) as refused:
                client.get(SCRIPTED + "/echo")
            self.assertIn("bind", str(refused.exception))
        with httpx.Client(transport=httpx.HTTPTransport(retries=2)) as client:
            self.assertEqual(client.get(SCRIPTED + "/echo").status_code, 200)
            with self.assertRaises(httpx.ConnectError):
                client.get("http://127.0.0.1:1/")

    def test_limits_bound_the_connections_to_a_host(self):
        group = "limits-%d" % os.getpid()

        async def run():
            async with httpx.AsyncClient(limits=httpx.Limits(max_connections=2)) as client:
                await asyncio.gather(*(client.get(SCRIPTED + "/slow?ms=200&group=" + group) for _ in range(6)))
                return (await client.get(SCRIPTED + "/stats?of=" + group)).json()
        try:
            stats = asyncio.run(run())
        finally:
            httpx.set_host_limit("127.0.0.1", 0)
        self.assertEqual(stats["seen"], 6)
        self.assertLessEqual(stats["peak"], 2, "at most two at once: %r" % (stats,))

    @unittest.skipUnless(HTTPS and SELFSIGNED and CERTS, "no TLS servers")
    def test_verify_takes_an_ssl_context(self):
        import ssl
        trusting = ssl.create_default_context(cafile=CERTS + "/ca.pem")
        with httpx.Client(verify=trusting) as client:
            self.assertEqual(client.get(HTTPS + "/small").status_code, 200)
        with httpx.Client(verify=ssl.create_default_context()) as client:
            with self.assertRaises(httpx.ConnectError):
                client.get(HTTPS + "/small")
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        with httpx.Client(verify=insecure) as client:
            self.assertEqual(client.get(SELFSIGNED + "/small").status_code, 200)
        # trust_env: SSL_CERT_FILE names the trusted certificates, as httpx reads it (the system's
        # store is asked first, while the variable is not set: OpenSSL reads it too).
        with httpx.Client(trust_env=False) as client:
            with self.assertRaises(httpx.ConnectError):
                client.get(HTTPS + "/small")
        os.environ["SSL_CERT_FILE"] = CERTS + "/ca.pem"
        try:
            with httpx.Client() as client:
                self.assertEqual(client.get(HTTPS + "/small").status_code, 200)
        finally:
            del os.environ["SSL_CERT_FILE"]
        # verify=path trusts that bundle alone, as httpx's does; Courier's own cafile= adds to the
        # system's roots (system_roots=False drops them). Run where the system's roots are the
        # test CA (SSL_CERT_FILE, read once per process: a process of its own).
        script = "\n".join([
            "import courier, os",
            "url, other = os.environ['URL'], os.environ['OTHER']",
            "def outcome(call):",
            "    try:",
            "        return call().status_code",
            "    except courier.ConnectError as error:",
            "        return type(error).__name__",
            "with courier.Client(trust_env=False) as c: print(outcome(lambda: c.get(url)))",
            "with courier.Client(trust_env=False, verify=other) as c: print(outcome(lambda: c.get(url)))",
            "with courier.Client(trust_env=False) as c: print(outcome(lambda: c.get(url, verify=other)))",
            "with courier.Engine(accepted_status=(0, 1000)) as e:",
            "    print(outcome(lambda: e.get(url, cafile=other)))",
            "    print(outcome(lambda: e.get(url, cafile=other, system_roots=False)))",
        ])
        import subprocess
        ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, SSL_CERT_FILE=CERTS + "/ca.pem", URL=HTTPS + "/small",
                                      OTHER=CERTS + "/selfsigned.pem", PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(ran.stdout.split(), ["200", "TLSError", "TLSError", "200", "TLSError"], ran.stderr)
        half = ssl.create_default_context(cafile=CERTS + "/ca.pem")
        half.check_hostname = False
        with self.assertRaises(httpx.UsageError) as refused:
            httpx.Client(verify=half)
        self.assertIn("check_hostname", str(refused.exception))


if __name__ == "__main__":
    unittest.main()
